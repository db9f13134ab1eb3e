/*
 * stack.h - copying user stacks out of stopped threads and walking their
 * frame pointers (private to src/record; the ptrace sampler's).
 *
 * The stacks of all threads of a process caught by one tick come in one
 * process_vm_readv, split at page boundaries, so a stack running into
 * unmapped memory still yields its readable prefix. Where a seccomp filter
 * refuses process_vm_readv (EPERM, ENOSYS), /proc/PID/mem is read instead
 * from then on.
 */
#ifndef TESTFLAME_RECORD_STACK_H
#define TESTFLAME_RECORD_STACK_H

#include "testflame/common.h"

#include <sys/types.h>
#include <sys/uio.h>

#define TF_STACK_PAGE 4096
#define TF_STACK_IOV 1024   /* iovec elements per process_vm_readv */

typedef struct {
	bool vm_readv;          /* process_vm_readv still allowed */
	struct iovec liov[TF_STACK_IOV], riov[TF_STACK_IOV];
	uint32_t owner[TF_STACK_IOV];
	/* the last pages read for frames beyond a copied stack */
	uint8_t page[2 * TF_STACK_PAGE];
	uint64_t page_addr;
	size_t page_len;
} tf_stack_reader;

/* Start with process_vm_readv allowed. */
void tf_stack_reader_init(tf_stack_reader *r);

/*
 * The readable prefix of [addr, addr + len) in process `pid`: how many
 * bytes landed in `buf`. `*mem_fd` is the process's /proc/PID/mem, opened
 * here on first need (-1 until then); the caller closes it.
 */
size_t tf_stack_read(tf_stack_reader *r, pid_t pid, int *mem_fd, uint64_t addr, void *buf,
		     size_t len);

/* One stack to copy: `window` bytes from `sp` into `buf`. */
typedef struct {
	uint64_t sp;
	uint8_t *buf;
	bool skip;              /* nothing to read for this one */
	size_t len;             /* out: the readable prefix (0 when skipped) */
} tf_stack_req;

/* Copy the stacks of `n` threads of process `pid` in as few calls as the
 * iovec limit allows. A failing page ends that stack only. */
void tf_stack_read_many(tf_stack_reader *r, pid_t pid, int *mem_fd, tf_stack_req *req, size_t n,
			size_t window);

/*
 * The call chain along the frame pointers: `ip`, then the return address
 * of every frame from `fp` up, at most `max` entries. Frames are read from
 * the copied stack `win` (which starts at `sp`) and, beyond it, from the
 * process (a few pages at most). Stops at a frame pointer that does not
 * move up the stack or a return address in the first page.
 */
size_t tf_stack_walk_fp(tf_stack_reader *r, pid_t pid, int *mem_fd, uint64_t *chain, size_t max,
			uint64_t ip, uint64_t sp, uint64_t fp, const uint8_t *win, size_t winlen);

#endif

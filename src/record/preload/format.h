/*
 * format.h - the files the allocation sampler (tfalloc.c, preloaded into
 * the command's processes) writes for testflame (alloc.c reads them): one
 * file per process image, DIR/PID.N, in this layout. Plain C, no testflame
 * header: the preload links nothing of testflame.
 *
 *   [0, TF_ALLOC_RECORDS)  the header and one slot of exact counters per
 *                          thread, which the process updates in place
 *   [TF_ALLOC_RECORDS, ..) records, appended in place too
 *
 * The whole file is a shared mapping of the process (MAP_SHARED): what it
 * wrote is in the file whatever becomes of the process, killed at any
 * moment included. A writer reserves a record's room by moving `tail`
 * (atomically), writes its size, its body, and its type last: a record
 * of type 0 was being written when the process died, and is skipped by
 * its size; a size of 0 ends the records.
 *
 * Every record starts with a tf_alloc_rec (type and size, 8-byte aligned)
 * and names its thread and its moment (CLOCK_MONOTONIC, the clock of the
 * perf samples and the markers).
 */
#ifndef TESTFLAME_RECORD_PRELOAD_FORMAT_H
#define TESTFLAME_RECORD_PRELOAD_FORMAT_H

#include <stdint.h>

#define TF_ALLOC_MAGIC "TFALLOC1"
#define TF_ALLOC_VERSION 1
/* Slots: one per thread; the threads of a process that had more count in
 * their own memory, and their counts reach the file in their records. */
#define TF_ALLOC_SLOTS 1023
#define TF_ALLOC_HEADER 4096
#define TF_ALLOC_RECORDS (TF_ALLOC_HEADER + TF_ALLOC_SLOTS * 64)
/* The most a process image writes: what its mapping reserves */
#define TF_ALLOC_FILE_MAX (8ULL << 30)
/*
 * The pool: files testflame makes ahead in the same directory, so that a
 * process takes one instead of creating its own (a new inode and its
 * blocks: the most of what the sampler cost a short process). DIR/p.K
 * (K = 0, 1, ...) are the files, each TF_ALLOC_POOL_SIZE bytes with room
 * on disk (fallocate), all zeros; each gets its name once complete. A
 * process claims a K by appending one byte to DIR/ctl (O_APPEND: K is the
 * file's size before its byte) and renames DIR/p.K to its own name,
 * PID.N, never over another's. When p.K is not there (not made yet, or
 * taken), the process creates its file as without a pool; the rename is
 * what decides, so a claim counted twice costs a file, never a mix-up.
 * testflame keeps a few dozen files made past ctl's size. Names
 * that do not start with a digit are never a process's file.
 */
#define TF_ALLOC_POOL_CTL "ctl"
#define TF_ALLOC_POOL_SIZE (TF_ALLOC_RECORDS + (1ULL << 20))

/* The longest directory testflame gives the sampler (its NUL included):
 * the sampler's names are built in small static buffers, which share a
 * page with its other state (each page more is a page fault more in
 * every process). */
#define TF_ALLOC_DIR_MAX 512

/* The environment testflame gives the command. */
#define TF_ALLOC_ENV_DIR "TESTFLAME_ALLOC_DIR"     /* where the files go */
#define TF_ALLOC_ENV_RATE "TESTFLAME_ALLOC_RATE"   /* mean bytes between samples */
#define TF_ALLOC_ENV_STACK "TESTFLAME_ALLOC_STACK" /* bytes of stack copied a sample */
/* The mean distance between two samples, in bytes allocated, as
 * tcmalloc's and jemalloc's heap profilers sample by default (finer in
 * a thread that allocated little: tfalloc.c). */
#define TF_ALLOC_RATE_DEFAULT (512 * 1024)
/* Frames of a sample's frame-pointer chain, at most. */
#define TF_ALLOC_MAX_FRAMES 127

/* Why a process's allocations are not counted (header flags). */
enum {
	TF_ALLOC_ASIDE_FOREIGN = 1,   /* malloc resolves to the program's own (an
				       * allocator or a sanitizer linked in) */
	TF_ALLOC_ASIDE_SANITIZER = 2, /* a sanitizer's runtime is in the process */
	TF_ALLOC_ASIDE_NOSYM = 4,     /* the next malloc could not be found */
	TF_ALLOC_LIVE_FULL = 8,       /* too many sampled blocks live at once: some
				       * frees were not matched */
	TF_ALLOC_POOLED = 16,         /* the file was taken from the pool */
};

struct tf_alloc_header {
	char magic[8];
	uint32_t version, header_size;
	uint32_t pid, flags;          /* flags: TF_ALLOC_ASIDE_* */
	uint64_t start_ns;            /* when the process image started sampling */
	uint64_t rate;                /* mean bytes between samples, at most */
	uint32_t nslots, slots_used;  /* slots_used: claimed so far (atomic) */
	uint64_t hwm_kb;              /* VmHWM at the process's exit, 0 unknown */
	uint64_t end_ns;              /* when it exited through exit(), 0 unknown */
	uint64_t tail;                /* bytes of records reserved (atomic) */
	uint64_t backed;              /* bytes of the file with room on disk */
	char program[256];            /* /proc/self/exe, for its notes: empty without one */
};

/* One thread's exact counts (its slot), updated by the thread alone. */
struct tf_alloc_slot {
	uint32_t tid, state;          /* state: 1 in use, 2 the thread ended */
	uint64_t allocs, bytes;       /* allocations and bytes asked for */
	uint64_t frees;
	uint64_t end_ns;              /* when the thread ended, 0 running */
	uint64_t pad[3];
};

enum {
	TF_ALLOC_REC_SAMPLE = 1,  /* a sampled allocation */
	TF_ALLOC_REC_FREE = 2,    /* a sampled block freed (or moved by realloc) */
	TF_ALLOC_REC_MARK = 3,    /* the thread's counts at a moment */
	TF_ALLOC_REC_NOTE = 4,    /* a sentence for the run's notes */
};

struct tf_alloc_rec {
	uint16_t type, pad;
	uint32_t size;                /* of the whole record, a multiple of 8 */
	uint32_t tid, pad2;
	uint64_t time;
};

/* The thread's counts so far (cumulative), in every SAMPLE and MARK. */
struct tf_alloc_counts {
	uint64_t allocs, bytes, frees;
};

/*
 * SAMPLE: the block and the caller's stack. `ips` (nips of them) is the
 * frame-pointer chain, ips[0] the return address into the function that
 * called malloc, less one (the call's own address). With a stack copy
 * (stack_len > 0): the caller's registers at that call (sp, bp, ip) and
 * the stack from sp, for DWARF unwinding of code without frame pointers.
 * Then ips[nips], then stack_len bytes, padded to 8.
 */
struct tf_alloc_sample {
	struct tf_alloc_rec h;
	uint64_t size, ptr;           /* bytes asked for, the block */
	uint64_t rate;                /* the mean distance this sample was drawn at */
	struct tf_alloc_counts counts;
	uint32_t nips, stack_len;
	uint64_t sp, bp, ip;
};

/* MARK kinds: why the counts were written. */
enum {
	TF_ALLOC_MARK_TICK = 1,       /* a millisecond or more since the last */
	TF_ALLOC_MARK_THREAD_END = 2, /* the thread ends */
	TF_ALLOC_MARK_EXIT = 3,       /* the process exits */
	TF_ALLOC_MARK_EXEC = 4,       /* the process execs another program */
};

struct tf_alloc_mark {
	struct tf_alloc_rec h;
	struct tf_alloc_counts counts;
	uint32_t kind, pad;
};

struct tf_alloc_free {
	struct tf_alloc_rec h;
	uint64_t ptr;
};

/* NOTE: then the text, NUL-terminated, padded to 8. h.pad is 1 when the
 * note is about the process itself (its program names it), 0 when it is
 * whole (about a program it starts). */
struct tf_alloc_note {
	struct tf_alloc_rec h;
	uint32_t pid, pad;            /* the writer's (a vfork child's own) */
};

#endif

/*
 * stack.c - user stacks copied from stopped threads and their frame
 * pointer chains (see record_int.h). Threads die at any moment of a sample and
 * stacks end in unmapped guard pages: every read takes what it can get,
 * and a short read is an answer, not an error.
 */

#include "record_int.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PAGE TF_STACK_PAGE

void tf_stack_reader_init(tf_stack_reader *r)
{
	r->vm_readv = true;
	r->page_len = 0;
}

/* Split [addr, addr+len) at page boundaries into r->riov/liov from `at`;
 * returns the new element count. */
static size_t split_pages(tf_stack_reader *r, size_t at, uint64_t addr, uint8_t *buf, size_t len,
			  uint32_t owner)
{
	while (len && at < TF_STACK_IOV) {
		size_t n = TF_MIN(len, PAGE - (size_t)(addr & (PAGE - 1)));
		r->riov[at].iov_base = (void *)(uintptr_t)addr;
		r->riov[at].iov_len = n;
		r->liov[at].iov_base = buf;
		r->liov[at].iov_len = n;
		r->owner[at] = owner;
		at++;
		addr += n;
		buf += n;
		len -= n;
	}
	return at;
}

static ssize_t read_proc_mem(pid_t pid, int *mem_fd, uint64_t addr, void *buf, size_t len)
{
	if (*mem_fd < 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
		*mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*mem_fd < 0)
			return -1;
	}
	return pread(*mem_fd, buf, len, (off_t)addr);
}

size_t tf_stack_read(tf_stack_reader *r, pid_t pid, int *mem_fd, uint64_t addr, void *buf,
		     size_t len)
{
	if (r->vm_readv) {
		size_t n = split_pages(r, 0, addr, buf, len, 0);
		ssize_t got = process_vm_readv(pid, r->liov, n, r->riov, n, 0);
		if (got >= 0)
			return (size_t)got;
		if (errno != EPERM && errno != ENOSYS)
			return 0;
	}
	ssize_t got = read_proc_mem(pid, mem_fd, addr, buf, len);
	if (got >= 0 && r->vm_readv)
		r->vm_readv = false; /* refused by a filter, not by the kernel's checks */
	return got > 0 ? (size_t)got : 0;
}

static void read_each(tf_stack_reader *r, pid_t pid, int *mem_fd, tf_stack_req *req, size_t from,
		      size_t to, size_t window)
{
	for (size_t i = from; i < to; i++)
		if (!req[i].skip)
			req[i].len = tf_stack_read(r, pid, mem_fd, req[i].sp, req[i].buf, window);
}

void tf_stack_read_many(tf_stack_reader *r, pid_t pid, int *mem_fd, tf_stack_req *req, size_t nreq,
			size_t window)
{
	size_t k = 0;

	for (size_t i = 0; i < nreq; i++)
		req[i].len = 0;
	while (k < nreq) {
		size_t n = 0, e = 0, first = k;
		for (; k < nreq; k++) {
			if (req[k].skip)
				continue;
			if (n + window / PAGE + 2 > TF_STACK_IOV)
				break;
			n = split_pages(r, n, req[k].sp, req[k].buf, window, (uint32_t)k);
		}
		if (!n)
			continue;
		if (!r->vm_readv) {
			read_each(r, pid, mem_fd, req, first, k, window);
			continue;
		}
		/* partial transfers stop at a failing page: that stack keeps what
		 * it got, and the next call starts at the following one */
		while (e < n) {
			ssize_t got = process_vm_readv(pid, r->liov + e, n - e, r->riov + e, n - e, 0);
			size_t rest;
			if (got < 0 && (errno == EPERM || errno == ENOSYS)) {
				/* refused, likely by a filter: /proc/PID/mem from now on */
				r->vm_readv = false;
				read_each(r, pid, mem_fd, req, first, k, window);
				break;
			}
			rest = got > 0 ? (size_t)got : 0;
			while (e < n && rest >= r->riov[e].iov_len) {
				rest -= r->riov[e].iov_len;
				req[r->owner[e]].len += r->riov[e].iov_len;
				e++;
			}
			if (e >= n)
				break;
			/* element e failed: its stack ends there */
			uint32_t o = r->owner[e];
			req[o].len += rest;
			while (e < n && r->owner[e] == o)
				e++;
		}
	}
}

size_t tf_stack_walk_fp(tf_stack_reader *r, pid_t pid, int *mem_fd, uint64_t *chain, size_t max,
			uint64_t ip, uint64_t sp, uint64_t fp, const uint8_t *win, size_t winlen)
{
	uint64_t lo = sp;
	size_t n = 0;
	int reads = 0;

	chain[n++] = ip;
	r->page_len = 0;
	while (n < max) {
		uint64_t fr[2];
		if (fp < lo || (fp & 7) || fp - sp > (64u << 20))
			break;
		if (fp + 16 <= sp + winlen) {
			memcpy(fr, win + (fp - sp), 16);
		} else if (r->page_len && fp >= r->page_addr &&
			   fp + 16 <= r->page_addr + r->page_len) {
			memcpy(fr, r->page + (fp - r->page_addr), 16);
		} else {
			if (++reads > 16)
				break;
			r->page_addr = fp & ~(uint64_t)(PAGE - 1);
			r->page_len = tf_stack_read(r, pid, mem_fd, r->page_addr, r->page,
						    sizeof(r->page));
			if (fp + 16 > r->page_addr + r->page_len)
				break;
			memcpy(fr, r->page + (fp - r->page_addr), 16);
		}
		if (fr[1] < PAGE)
			break;
		chain[n++] = fr[1];
		lo = fp + 16;
		fp = fr[0];
	}
	return n;
}

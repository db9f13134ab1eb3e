/*
 * jit.c - names of JIT-compiled code from /tmp/perf-PID.map.
 *
 * Node (--perf-basic-prof), Python 3.12+ (-X perf) and Java's
 * perf-map-agent write one line per code region: "START SIZE name", in
 * hex. The file belongs to a pid, and pids are reused, so a map read when a
 * process exits (tf_symbolizer_live, before anything cleans /tmp) is kept
 * with the time of that exit; replay gives each process instance the first
 * map read after its birth, and reads the file itself only for processes
 * that were still running (or never seen exiting). Later lines win where
 * regions overlap: the JIT reused the memory.
 */
#include "symbolize/symbolize_int.h"

#include <stdlib.h>
#include <string.h>

static bool jit_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_symbolizer *s = ctx;
	return s->jits.v[idx].pid == *(const uint32_t *)key;
}

static bool parse_line(char *line, uint64_t *start, uint64_t *size, char **name)
{
	char *p = line, *q;

	*start = strtoull(p, &q, 16);
	if (q == p || *q != ' ')
		return false;
	p = q + 1;
	*size = strtoull(p, &q, 16);
	if (q == p || *q != ' ' || !q[1])
		return false;
	*name = q + 1;
	return true;
}

uint32_t tf_sym_jit_read(tf_symbolizer *s, uint32_t pid, uint64_t exit_time)
{
	char path[64];
	tf_buf b = TF_BUF_INIT;
	uint32_t idx;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	if (tf_file_read(&b, path) != 0) {
		tf_buf_free(&b);
		return UINT32_MAX;
	}
	idx = tf_sym_jit_add(s, pid, exit_time, b.ptr, b.len);
	tf_buf_free(&b);
	return idx;
}

uint32_t tf_sym_jit_add(tf_symbolizer *s, uint32_t pid, uint64_t exit_time, char *text, size_t len)
{
	tf_sym_jit j;
	uint32_t rank = 0;

	memset(&j, 0, sizeof(j));
	j.pid = pid;
	j.next = UINT32_MAX;
	j.exit_time = exit_time;
	for (char *p = text, *end = text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		uint64_t start, size;
		char *name;
		if (parse_line(p, &start, &size, &name) && size && start + size > start) {
			uint32_t id = tf_strtab_intern(&s->strs, name, strlen(name));
			tf_sym_ivls_add(&j.entries, start, start + size, id, rank++);
		}
		p = nl + 1;
	}
	tf_sym_ivls_build(&j.entries);

	uint32_t idx = (uint32_t)s->jits.n;
	uint32_t head = tf_htab_find(&s->jit_index, tf_hash_u64(pid), jit_eq, s, &pid);
	tf_vec_push(&s->jits, j);
	if (head == TF_HTAB_NONE) {
		tf_htab_insert(&s->jit_index, tf_hash_u64(pid), idx);
	} else {
		while (s->jits.v[head].next != UINT32_MAX)
			head = s->jits.v[head].next;
		s->jits.v[head].next = idx;
	}
	s->stats.jit_maps++;
	return idx;
}

uint32_t tf_sym_jit_for(tf_symbolizer *s, tf_sym_proc *p)
{
	uint32_t best = UINT32_MAX, pid = p->pid;

	if (p->jit_looked)
		return p->jit;
	p->jit_looked = true;
	for (uint32_t i = tf_htab_find(&s->jit_index, tf_hash_u64(pid), jit_eq, s, &pid);
	     i != TF_HTAB_NONE && i != UINT32_MAX; i = s->jits.v[i].next) {
		const tf_sym_jit *j = &s->jits.v[i];
		if (j->exit_time >= p->birth &&
		    (best == UINT32_MAX || j->exit_time < s->jits.v[best].exit_time))
			best = i;
	}
	if (best == UINT32_MAX)
		best = tf_sym_jit_read(s, pid, UINT64_MAX);
	p->jit = best;
	return best;
}

void tf_sym_jits_free(tf_symbolizer *s)
{
	for (size_t i = 0; i < s->jits.n; i++)
		tf_sym_ivls_free(&s->jits.v[i].entries);
	tf_vec_free(&s->jits);
	tf_htab_free(&s->jit_index);
}

/*
 * maps.c - every process's address space, replayed from the recording's
 * side-band events.
 *
 * Events arrive in time order, so the current state per pid is all that is
 * kept: a sorted array of non-overlapping mappings. A new mapping replaces
 * whatever it overlaps (the kernel's own rule), fork copies the parent's
 * array, exec empties it, and a process's exit frees it. Lookups are a
 * binary search; the last process looked up is remembered because samples
 * come in runs of the same thread.
 */
#include "symbolize/symbolize_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_symbolizer *s = ctx;
	return s->procs.v[idx]->pid == *(const uint32_t *)key;
}

tf_sym_proc *tf_sym_proc_get(tf_symbolizer *s, uint32_t pid, bool create)
{
	uint32_t i;
	tf_sym_proc *p;

	if (s->last_proc && s->last_proc->pid == pid)
		return s->last_proc;
	i = tf_htab_find(&s->proc_index, tf_hash_u64(pid), proc_eq, s, &pid);
	if (i != TF_HTAB_NONE) {
		s->last_proc = s->procs.v[i];
		return s->last_proc;
	}
	if (!create)
		return NULL;
	p = tf_xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->alive = true;
	p->jit = UINT32_MAX;
	tf_htab_insert(&s->proc_index, tf_hash_u64(pid), (uint32_t)s->procs.n);
	tf_vec_push(&s->procs, p);
	s->last_proc = p;
	return p;
}

/* A new instance of the pid starts: forget everything of the old one. */
static void proc_reset(tf_sym_proc *p, uint64_t time)
{
	p->maps.n = 0;
	p->alive = true;
	p->birth = time;
	p->jit = UINT32_MAX;
	p->jit_looked = false;
}

tf_sym_map *tf_sym_proc_find_map(tf_sym_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->maps.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps.v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	tf_sym_map *m = &p->maps.v[lo - 1];
	return addr < m->end ? m : NULL;
}

static void maps_insert(tf_sym_proc *p, const tf_sym_map *m)
{
	size_t n = p->maps.n, i = 0, j, lo = 0, hi = n, add = 1;
	tf_sym_map left, right;
	bool has_left = false, has_right = false;

	/* first mapping ending after m->start (ends are sorted too) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->maps.v[mid].end <= m->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	for (j = i; j < n && p->maps.v[j].start < m->end; j++)
		;
	if (i < j) {
		if (p->maps.v[i].start < m->start) {
			left = p->maps.v[i];
			left.end = m->start;
			has_left = true;
		}
		if (p->maps.v[j - 1].end > m->end) {
			right = p->maps.v[j - 1];
			right.pgoff += m->end - right.start;
			right.start = m->end;
			has_right = true;
		}
	}
	add += has_left + has_right;
	/* replace maps[i, j) by [left] m [right] */
	tf_vec_reserve(&p->maps, n - (j - i) + add);
	memmove(p->maps.v + i + add, p->maps.v + j, (n - j) * sizeof(tf_sym_map));
	size_t k = i;
	if (has_left)
		p->maps.v[k++] = left;
	p->maps.v[k++] = *m;
	if (has_right)
		p->maps.v[k++] = right;
	p->maps.n = n - (j - i) + add;
}

static void on_mmap(tf_symbolizer *s, const tf_rec_event *ev)
{
	tf_sym_proc *p = tf_sym_proc_get(s, ev->pid, true);
	const char *name = ev->mmap.filename ? ev->mmap.filename : "";
	tf_sym_map m;
	bool deleted = false;

	if (!p->alive)
		proc_reset(p, ev->time); /* pid reused without a fork seen */
	if (ev->mmap.len == 0 || ev->mmap.start + ev->mmap.len < ev->mmap.start)
		return;
	memset(&m, 0, sizeof(m));
	m.start = ev->mmap.start;
	m.end = ev->mmap.start + ev->mmap.len;
	m.pgoff = ev->mmap.pgoff;
	m.file = UINT32_MAX;
	m.kind = (uint8_t)tf_sym_classify(name);
	if (ev->mmap.prot && !(ev->mmap.prot & PROT_EXEC))
		m.kind = TF_SYM_MAP_ANON; /* data (mmap_data): never code to resolve */
	if (m.kind == TF_SYM_MAP_FILE) {
		m.file = tf_sym_file_for_event(s, ev, &deleted);
	} else if (m.kind == TF_SYM_MAP_VDSO) {
		m.file = tf_sym_vdso_file(s);
		m.pgoff = 0; /* the image starts the mapping, whatever vm_pgoff says */
		if (m.file == UINT32_MAX)
			m.kind = TF_SYM_MAP_ANON;
	}
	if (m.kind == TF_SYM_MAP_ANON)
		m.name = tf_strtab_intern(&s->strs, name, strlen(name));
	maps_insert(p, &m);
}

void tf_symbolizer_event(tf_symbolizer *s, const tf_rec_event *ev)
{
	tf_sym_proc *p, *parent;

	/* what tf_symbolizer_lookup() remembers may no longer hold */
	if (s->lookup_gen && ++s->lookup_gen == 0) {
		memset(s->lookup_cache, 0, s->lookup_slots * sizeof(*s->lookup_cache));
		s->lookup_gen = 1;
	}

	switch (ev->type) {
	case TF_REC_MMAP:
		on_mmap(s, ev);
		break;
	case TF_REC_COMM:
		if (!ev->comm.exec)
			break;
		/* the old image is gone; the new one's mmaps follow */
		p = tf_sym_proc_get(s, ev->pid, true);
		if (!p->alive)
			proc_reset(p, ev->time);
		p->maps.n = 0;
		break;
	case TF_REC_FORK:
		if (ev->pid == ev->fork.ppid) {
			tf_sym_proc_get(s, ev->pid, true); /* a thread */
			break;
		}
		parent = tf_sym_proc_get(s, ev->fork.ppid, false);
		p = tf_sym_proc_get(s, ev->pid, true);
		proc_reset(p, ev->time);
		/* the lookup of p may have moved last_proc; parent is stable */
		if (parent && parent != p && parent->maps.n) {
			tf_vec_reserve(&p->maps, parent->maps.n);
			memcpy(p->maps.v, parent->maps.v, parent->maps.n * sizeof(tf_sym_map));
			p->maps.n = parent->maps.n;
		}
		break;
	case TF_REC_EXIT:
		if (ev->pid != ev->tid)
			break;
		p = tf_sym_proc_get(s, ev->pid, false);
		if (p) {
			tf_vec_free(&p->maps);
			p->alive = false;
		}
		break;
	default:
		break;
	}
}

void tf_sym_procs_free(tf_symbolizer *s)
{
	for (size_t i = 0; i < s->procs.n; i++) {
		tf_vec_free(&s->procs.v[i]->maps);
		free(s->procs.v[i]);
	}
	tf_vec_free(&s->procs);
	tf_htab_free(&s->proc_index);
	s->last_proc = NULL;
}

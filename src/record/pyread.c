/*
 * pyread.c - reading the Python stack of each sampled thread of a CPython
 * process, during the run, from outside the process (as py-spy does).
 *
 * A sample holds registers and a copy of the C stack; CPython 3.11+ keep
 * their frames on the heap (per-thread data-stack chunks), earlier ones in
 * frame objects, so the Python functions cannot be recovered from a sample
 * afterwards. The reader follows the side-band to learn which processes
 * run an interpreter (a python executable or libpython mapped, probed
 * once per file by tf_pybin_probe()), and when the sampler hands it a
 * sample of such a process it walks the sampled thread's frames there and
 * then through process_vm_readv (/proc/PID/mem where that is refused):
 *
 *   perf    while a process with a readable interpreter lives, the
 *           recording loop drains the rings every quarter of a sampling
 *           period, 250 us at most (4,000 wake-ups a second of testflame's
 *           own, on its side of the machine), and the reader, at a
 *           higher priority than the command where allowed, reads the
 *           thread as it runs on; a read that raced the thread ends early
 *           and is flagged. (Waking the reader at every sample, as this
 *           did first, cost every suite a wake-up per sample, Python or
 *           not: 2-3% of jansson's ctest suite at 249 Hz.)
 *   ptrace  the thread is stopped for its sample: the read is exact
 *
 * The stack goes into the spool as a TF_SPOOL_PYSTACK record stamped with
 * the sample's own time, written before the sample, so replay hands it out
 * just before its sample; the code objects it names are announced once per
 * process in TF_SPOOL_PYCODE records ahead of it. Attribution splices the
 * Python frames into the native stack at the evaluation loop's frames
 * (attribute/pyframes.c).
 *
 * A process whose interpreter cannot be read (stripped of its symbols, a
 * version whose layout is unknown) is said once per binary, and its
 * samples are counted as unread, never silently left native.
 */

#include "record_int.h"
#include "testflame/python.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_PYFRAMES 256

typedef struct {
	char *path;
	tf_pybin bin;
} bin_entry;

typedef struct {
	uint32_t pid;
	tf_pyproc *pp;        /* the interpreter's frames, when readable */
	uint32_t unreadable;  /* bin index + 1 of an interpreter we cannot read */
	uint64_t since;       /* when what it runs was learned (its exec, mapping or fork) */
	uint64_t ended;       /* when it exited, until the pid lives again */
	int memfd;            /* /proc/PID/mem, where process_vm_readv is refused */
	bool use_memfd;
} proc_entry;

struct tf_pyread {
	tf_recording *rec;
	const tf_record_opts *o;
	TF_VEC(bin_entry *) bins;
	TF_VEC(proc_entry *) procs;
	tf_htab proc_index;
	uint32_t next_code;
	size_t live;          /* processes whose interpreter is read (pp set) */
	/* the sample being read, for the code records it makes */
	uint32_t cur_pid, cur_tid;
	uint64_t cur_time;
	tf_pyframe frames[MAX_PYFRAMES];
	uint32_t packed[2 * MAX_PYFRAMES];
	int err;
};

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_pyread *r = ctx;
	return r->procs.v[idx]->pid == *(const uint32_t *)key;
}

static proc_entry *proc_get(tf_pyread *r, uint32_t pid, bool create)
{
	uint32_t i = tf_htab_find(&r->proc_index, tf_hash_u64(pid), proc_eq, r, &pid);
	if (i != TF_HTAB_NONE)
		return r->procs.v[i];
	if (!create)
		return NULL;
	proc_entry *pe = tf_xcalloc(1, sizeof(*pe));
	pe->pid = pid;
	pe->memfd = -1;
	tf_vec_push(&r->procs, pe);
	tf_htab_insert(&r->proc_index, tf_hash_u64(pid), (uint32_t)r->procs.n - 1);
	return pe;
}

/*
 * The side-band comes in one ring per CPU, each read in turn: a process
 * that exec'd on one CPU and mapped its interpreter on another (the
 * kernel moves a process at its exec) can be read mapping it before it
 * exec'd, and a fork before its child's exec. An event older than what
 * the entry holds is then about an earlier life, and does not undo it
 * (all the samples of such a process were left unread).
 */
static bool stale(const proc_entry *pe, uint64_t time)
{
	return time && pe->since && time < pe->since;
}

/* Forget what a process ran (it exec'd or exited); the entry stays for
 * the pid's next life. */
static void proc_reset(tf_pyread *r, proc_entry *pe)
{
	if (pe->pp)
		r->live--;
	tf_pyproc_free(pe->pp);
	pe->pp = NULL;
	pe->unreadable = 0;
	pe->since = 0;
	if (pe->memfd >= 0)
		close(pe->memfd);
	pe->memfd = -1;
	pe->use_memfd = false;
}

static size_t read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	proc_entry *pe = ctx;
	ssize_t n;

	if (!pe->use_memfd) {
		struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
		n = process_vm_readv((pid_t)pe->pid, &local, 1, &remote, 1, 0);
		if (n >= 0)
			return (size_t)n;
		if (errno != EPERM && errno != ENOSYS && errno != EACCES)
			return 0;
		pe->use_memfd = true; /* a seccomp filter or an LSM refuses it */
	}
	if (pe->memfd < 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%u/mem", pe->pid);
		pe->memfd = open(path, O_RDONLY | O_CLOEXEC);
		if (pe->memfd < 0)
			return 0;
	}
	if (addr > INT64_MAX)
		return 0;
	n = pread(pe->memfd, buf, len, (off_t)addr);
	return n < 0 ? 0 : (size_t)n;
}

static size_t readv_mem(void *ctx, const uint64_t *addrs, uint8_t *bufs, size_t len, size_t n)
{
	proc_entry *pe = ctx;
	struct iovec local[64], remote[64];
	ssize_t got;

	if (pe->use_memfd || n > TF_ARRAY_SIZE(local))
		return 0;
	for (size_t i = 0; i < n; i++) {
		local[i] = (struct iovec){ bufs + i * len, len };
		remote[i] = (struct iovec){ (void *)(uintptr_t)addrs[i], len };
	}
	/* partial reads stop at the first range that fails */
	got = process_vm_readv((pid_t)pe->pid, local, n, remote, n, 0);
	return got > 0 ? (size_t)got / len : 0;
}

static void spool(tf_pyread *r, uint16_t type, const void *fixed, size_t flen, const void *var,
		  size_t vlen)
{
	int rc;
	if (r->err)
		return;
	rc = tf_spool_append_own(r->rec->spool, type, fixed, flen, var, vlen);
	if (rc)
		r->err = rc;
}

static void on_code(void *ctx, const tf_pycode *c)
{
	tf_pyread *r = ctx;
	size_t nl = strlen(c->name), fl = strlen(c->file);
	char *var = tf_xmalloc(nl + fl + 2);
	struct {
		uint32_t pid, tid;
		uint64_t time;
		uint32_t id;
		int32_t first;
		uint32_t namelen, qualified;
	} fixed = { r->cur_pid, r->cur_tid, r->cur_time, c->id, c->firstlineno, (uint32_t)nl,
		    c->qualified };

	memcpy(var, c->name, nl + 1);
	memcpy(var + nl + 1, c->file, fl + 1);
	spool(r, TF_SPOOL_PYCODE, &fixed, sizeof(fixed), var, nl + 1 + fl);
	free(var);
}

int tf_pyread_new(tf_pyread **out, tf_recording *rec, const tf_record_opts *o)
{
	tf_pyread *r = tf_xcalloc(1, sizeof(*r));
	r->rec = rec;
	r->o = o;
	*out = r;
	return 0;
}

void tf_pyread_free(tf_pyread *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->procs.n; i++) {
		proc_reset(r, r->procs.v[i]);
		free(r->procs.v[i]);
	}
	tf_vec_free(&r->procs);
	tf_htab_free(&r->proc_index);
	for (size_t i = 0; i < r->bins.n; i++) {
		tf_pybin_clear(&r->bins.v[i]->bin);
		free(r->bins.v[i]->path);
		free(r->bins.v[i]);
	}
	tf_vec_free(&r->bins);
	free(r);
}

int tf_pyread_error(const tf_pyread *r)
{
	return r ? r->err : 0;
}

/* "3.11.2" once in the run's list of interpreters (with why, when it
 * cannot be read). */
static void note_version(tf_pyread *r, const tf_pybin *b)
{
	char v[32], item[64];
	char *list = r->rec->info.py_versions;
	size_t used = strlen(list);

	if (b->version)
		tf_py_version_format(b->version, v, sizeof(v));
	else
		snprintf(v, sizeof(v), "?");
	snprintf(item, sizeof(item), "%s%s", v,
		 b->status == TF_PYBIN_OK ? "" : b->status == TF_PYBIN_STRIPPED ? " (stripped)"
									: " (unknown layout)");
	for (const char *p = list; (p = strstr(p, item)); p++)
		if ((p == list || p[-1] == ',') && (p[strlen(item)] == ',' || !p[strlen(item)]))
			return;
	if (used + strlen(item) + 2 < sizeof(r->rec->info.py_versions))
		snprintf(list + used, sizeof(r->rec->info.py_versions) - used, "%s%s",
			 used ? "," : "", item);
}

/* The interpreter facts of a file, probed at its first mapping. */
static bin_entry *bin_for(tf_pyread *r, const char *path, uint32_t *index)
{
	for (size_t i = 0; i < r->bins.n; i++)
		if (strcmp(r->bins.v[i]->path, path) == 0) {
			*index = (uint32_t)i;
			return r->bins.v[i];
		}
	bin_entry *b = tf_xcalloc(1, sizeof(*b));
	b->path = tf_xstrdup(path);
	if (tf_pybin_probe(&b->bin, path) != 0)
		tf_error_clear(); /* gone already: the status says unreadable */
	tf_vec_push(&r->bins, b);
	*index = (uint32_t)r->bins.n - 1;
	if (b->bin.status == TF_PYBIN_OK) {
		char v[32];
		tf_py_version_format(b->bin.version, v, sizeof(v));
		tf_record_notice(r->o->notice, r->o->notice_ctx, TF_NOTICE_VERBOSE,
				 "python: reading the frames of CPython %s in '%s'", v, path);
	} else if (b->bin.status == TF_PYBIN_STRIPPED || b->bin.status == TF_PYBIN_UNSUPPORTED) {
		tf_record_notice(r->o->notice, r->o->notice_ctx, TF_NOTICE_WARN,
				 "python: '%s' %s: its samples show the interpreter's C functions, "
				 "not the Python ones", path, b->bin.why);
	}
	if (b->bin.status == TF_PYBIN_OK || b->bin.status == TF_PYBIN_STRIPPED ||
	    b->bin.status == TF_PYBIN_UNSUPPORTED)
		note_version(r, &b->bin);
	return b;
}

static void on_mmap(tf_pyread *r, const tf_rec_event *ev)
{
	const char *f = ev->mmap.filename;
	proc_entry *pe;
	bin_entry *b;
	uint32_t bi;
	uint64_t bias;

	if ((ev->mmap.prot && !(ev->mmap.prot & PROT_EXEC)) || !f || f[0] != '/' ||
	    !tf_pybin_candidate(f))
		return;
	pe = proc_get(r, ev->pid, false);
	if (pe && pe->pp)
		return; /* one interpreter per process */
	if (pe && (stale(pe, ev->time) || (pe->ended && ev->time && ev->time <= pe->ended)))
		return; /* of an earlier life, read late */
	b = bin_for(r, f, &bi);
	if (b->bin.status == TF_PYBIN_STRIPPED || b->bin.status == TF_PYBIN_UNSUPPORTED) {
		pe = proc_get(r, ev->pid, true);
		pe->unreadable = bi + 1;
		pe->since = ev->time;
		return;
	}
	if (b->bin.status != TF_PYBIN_OK ||
	    !tf_pybin_bias(&b->bin, ev->mmap.start, ev->mmap.pgoff, &bias))
		return;
	pe = proc_get(r, ev->pid, true);
	tf_pyproc_opts po = { ev->pid, &b->bin, bias, read_mem, readv_mem, pe, on_code, r,
			      &r->next_code };
	if (tf_pyproc_new(&pe->pp, &po) != 0) {
		tf_error_clear();
		pe->pp = NULL;
		return;
	}
	r->live++;
	pe->unreadable = 0;
	pe->since = ev->time;
}

bool tf_pyread_live(const tf_pyread *r)
{
	return r && r->live > 0;
}

void tf_pyread_event(tf_pyread *r, const tf_rec_event *ev)
{
	proc_entry *pe, *child;

	if (!r)
		return;
	switch (ev->type) {
	case TF_REC_MMAP:
		on_mmap(r, ev);
		break;
	case TF_REC_COMM:
		if (!ev->comm.exec)
			break;
		/* while an interpreter is read, every exec is remembered: its
		 * fork read after it must not hand it its parent's interpreter */
		pe = proc_get(r, ev->pid, r->live > 0);
		if (pe && !stale(pe, ev->time)) {
			proc_reset(r, pe);
			pe->ended = 0;
			pe->since = ev->time;
		}
		break;
	case TF_REC_FORK:
		if (ev->pid == ev->fork.ppid)
			break; /* a thread */
		pe = proc_get(r, ev->fork.ppid, false);
		if (!pe || (!pe->pp && !pe->unreadable))
			break;
		child = proc_get(r, ev->pid, true);
		if (stale(child, ev->time))
			break; /* its exec was read first: it runs something else */
		proc_reset(r, child);
		child->ended = 0;
		child->since = ev->time;
		/* the same memory, copied: the same interpreter at the same place */
		child->unreadable = pe->unreadable;
		if (pe->pp && (child->pp = tf_pyproc_fork(pe->pp, ev->pid, child)))
			r->live++;
		break;
	case TF_REC_EXIT:
		if (ev->pid == ev->tid && (pe = proc_get(r, ev->pid, false)) && !stale(pe, ev->time)) {
			proc_reset(r, pe);
			pe->ended = ev->time;
		}
		break;
	default:
		break;
	}
}

void tf_pyread_sample(tf_pyread *r, uint32_t pid, uint32_t tid, uint64_t time)
{
	proc_entry *pe;
	size_t n = 0;
	bool cut = false;
	int rc;

	if (!r || r->err || !(pe = proc_get(r, pid, false)))
		return;
	if (pe->unreadable) {
		r->rec->info.py_unread++;
		return;
	}
	if (!pe->pp)
		return;
	r->cur_pid = pid;
	r->cur_tid = tid;
	r->cur_time = time;
	uint64_t start = tf_now_ns();
	rc = tf_pyproc_stack(pe->pp, tid, r->frames, MAX_PYFRAMES, &n, &cut);
	/* its reads held the process's mmap lock (record.c) */
	tf_record_peeked(r->rec->spool, pid, start, tf_now_ns());
	if (rc == TF_ENOTFOUND || (!rc && !n))
		return; /* a thread without Python (yet, or any more) */
	if (!n) {
		r->rec->info.py_unread++;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		r->packed[2 * i] = r->frames[i].code;
		r->packed[2 * i + 1] = ((uint32_t)TF_MAX(r->frames[i].line, 0) & ~TF_PYFRAME_ENTRY) |
				       (r->frames[i].entry ? TF_PYFRAME_ENTRY : 0);
	}
	uint64_t now = tf_now_ns();
	struct {
		uint32_t pid, tid;
		uint64_t time;
		uint32_t n, flags;
		uint64_t delay;
	} fixed = { pid, tid, time, (uint32_t)n, (cut ? 1u : 0u) | (rc ? 2u : 0u),
		    now > time ? now - time : 0 };
	spool(r, TF_SPOOL_PYSTACK, &fixed, sizeof(fixed), r->packed, n * 8);
	r->rec->info.py_stacks++;
}

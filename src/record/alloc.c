/*
 * alloc.c - the command's allocations, measured by the sampler testflame
 * preloads into its processes (see alloc.h, and preload/tfalloc.c for the
 * sampler's side).
 *
 * The library: the copy installed beside the binary when it is this
 * build's (byte for byte the one embedded here), else the embedded one,
 * unpacked into the run's directory. A directory where programs may not
 * be mapped (a noexec TMPDIR), or a path the loader would split (a ':' or
 * a space in it), leaves the installed copy or none; the command then runs
 * as it is and the notes say so. A command the sampler must not enter (a
 * sanitizer build, another ABI) runs without it too.
 *
 * After the run each process image's file is read: its sampled
 * allocations and frees, its threads' counts (the slots for the last word,
 * the records for the moments in between: the spool gets each thread's
 * allocations since its previous count, so that each part goes to the test
 * that ran then), its peak resident set and its notes.
 */
#include "record_int.h"
#include "record/preload/execcheck.h"
#include "record/preload/format.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

extern const unsigned char tf_alloc_preload[];
extern const size_t tf_alloc_preload_len;

#define LIB_NAME "libtestflame-alloc.so"

/* An exec'd image the sampler may not be in: its peak read from /proc. */
typedef struct {
	uint32_t pid;
	uint32_t files;   /* the pid's sampler files when it exec'd: the next is its image's */
	uint64_t time;    /* the exec */
	uint64_t seen;    /* when the peak below was read */
	uint64_t hwm_kb;
	bool sampled;     /* its sampler's file appeared: it reports itself */
	bool gone, go;
} watch;

struct tf_alloc {
	char *dir;        /* the run's: the data files in dir/d, maybe the library */
	char *data;
	char *lib;        /* the library preloaded, NULL: none */
	char *why_not;    /* why the command runs without it */
	TF_VEC(char *) env;
	TF_VEC(watch) watches;
	uint64_t last_poll;
	int ctl;                    /* the pool's claims (format.h), -1: no pool */
	bool full;                  /* the pool ended for want of room */
	uint64_t made;              /* the files of the pool made so far */
};

/* The pool of files made ahead (format.h): POOL_SPARE ready to be taken,
 * at most POOL_BATCH made a poll (each is an inode and its blocks, some
 * 0.1-0.3 ms of the kernel's time that the command's processes no longer
 * spend). */
#define POOL_SPARE 16
#define POOL_BATCH 8

/* Make the pool's file K, named once complete (all its room on disk). */
static int make_pooled(const tf_alloc *a, uint64_t k)
{
	char path[4200], tmp[4200];
	snprintf(path, sizeof(path), "%s/p.%llu", a->data, (unsigned long long)k);
	snprintf(tmp, sizeof(tmp), "%s/t.%llu", a->data, (unsigned long long)k);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int rc = fallocate(fd, 0, 0, (off_t)TF_ALLOC_POOL_SIZE);
	if (close(fd) != 0 || rc != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* No more pool: without ctl no process looks for a file, and the files
 * not taken give their room back to those the processes make (a file
 * taken meanwhile was renamed: its unlink fails, as a process's rename
 * of one unlinked does). */
static void pool_end(tf_alloc *a, uint64_t next)
{
	char *path = tf_xasprintf("%s/%s", a->data, TF_ALLOC_POOL_CTL);
	unlink(path);
	free(path);
	for (uint64_t k = next; k < a->made; k++) {
		path = tf_xasprintf("%s/p.%llu", a->data, (unsigned long long)k);
		unlink(path);
		free(path);
	}
	close(a->ctl);
	a->ctl = -1;
}

/* Keep POOL_SPARE files past the claims ready, making at most `most`
 * now. A file system without fallocate, or a full one, ends the pool: the
 * processes create their own files, as without one. */
static void pool_fill(tf_alloc *a, unsigned most)
{
	struct stat st;
	if (a->ctl < 0 || fstat(a->ctl, &st) != 0)
		return;
	uint64_t next = (uint64_t)st.st_size;
	if (a->made < next)
		a->made = next; /* claimed before they were made: spent */
	for (unsigned i = 0; i < most && a->made < next + POOL_SPARE; i++, a->made++)
		if (make_pooled(a, a->made) != 0) {
			a->full = errno == ENOSPC || errno == EDQUOT;
			pool_end(a, next);
			return;
		}
}

static void pool_open(tf_alloc *a)
{
	char *path = tf_xasprintf("%s/%s", a->data, TF_ALLOC_POOL_CTL);
	a->ctl = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	free(path);
	pool_fill(a, POOL_SPARE);
}

/* The copy beside the binary (build/, or PREFIX/lib/testflame/), when it
 * is the one embedded: its path. */
static char *installed_copy(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	const char *const rel[] = { "/" LIB_NAME, "/../lib/testflame/" LIB_NAME };
	for (size_t i = 0; i < TF_ARRAY_SIZE(rel); i++) {
		char *path = tf_xasprintf("%s%s", exe, rel[i]);
		tf_buf b = TF_BUF_INIT;
		bool same = tf_file_read(&b, path) == 0 && b.len == tf_alloc_preload_len &&
			    memcmp(b.ptr, tf_alloc_preload, b.len) == 0;
		tf_buf_free(&b);
		tf_error_clear();
		if (same)
			return path;
		free(path);
	}
	return NULL;
}

static bool preloadable(const char *path)
{
	return !strpbrk(path, ": \t\n");
}

/* The library to preload: the installed copy, else the embedded one
 * unpacked into the run's directory. */
static char *find_library(const tf_alloc *a, char **why)
{
	char *lib = installed_copy();
	struct statvfs vfs;

	if (lib && preloadable(lib))
		return lib;
	free(lib);
	if (statvfs(a->dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
		*why = tf_xasprintf("TMPDIR ('%s') does not let programs be mapped (noexec), and no "
				    "copy of %s is installed beside testflame", a->dir, LIB_NAME);
		return NULL;
	}
	lib = tf_xasprintf("%s/%s", a->dir, LIB_NAME);
	if (!preloadable(lib)) {
		*why = tf_xasprintf("the path of TMPDIR ('%s') holds a ':' or a space, which "
				    "LD_PRELOAD cannot", a->dir);
		free(lib);
		return NULL;
	}
	int fd = open(lib, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	size_t off = 0;
	while (fd >= 0 && off < tf_alloc_preload_len) {
		ssize_t w = write(fd, tf_alloc_preload + off, tf_alloc_preload_len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	if (fd < 0 || off != tf_alloc_preload_len || close(fd) != 0) {
		*why = tf_xasprintf("cannot write %s into '%s': %s", LIB_NAME, a->dir, strerror(errno));
		free(lib);
		return NULL;
	}
	return lib;
}

int tf_alloc_open(tf_alloc **out, unsigned rate, unsigned stack_bytes, const char *program)
{
	const char *tmp = getenv("TMPDIR");
	tf_alloc *a = tf_xcalloc(1, sizeof(*a));
	char why[64];

	char cwd[4096];

	a->ctl = -1;
	*out = NULL;
	if (!tmp || !*tmp)
		tmp = "/tmp";
	/* by its full path: the command's processes may change directory */
	if (tmp[0] != '/' && getcwd(cwd, sizeof(cwd)))
		a->dir = tf_xasprintf("%s/%s/testflame-alloc.XXXXXX", cwd, tmp);
	else
		a->dir = tf_xasprintf("%s/testflame-alloc.XXXXXX", tmp);
	if (!mkdtemp(a->dir)) {
		int rc = tf_error_set_errno(TF_ERROR, "cannot create a directory for the "
					    "allocation sampler");
		free(a->dir);
		free(a);
		return rc;
	}
	a->data = tf_xasprintf("%s/d", a->dir);
	if (mkdir(a->data, 0755) != 0) {
		int rc = tf_error_set_errno(TF_ERROR, "cannot create '%s'", a->data);
		tf_alloc_free(a);
		return rc;
	}
	int kind = program ? tf_exec_check(program, why, sizeof(why)) : TF_EXEC_UNKNOWN;
	if (kind == TF_EXEC_SANITIZER)
		a->why_not = tf_xasprintf("the command (%s) links %s, which owns malloc and must "
					  "come first: no allocation was counted", program, why);
	else if (kind == TF_EXEC_ABI)
		a->why_not = tf_xasprintf("the command (%s) is built for %s: no allocation was "
					  "counted", program, why);
	else if (strlen(a->data) >= TF_ALLOC_DIR_MAX)
		a->why_not = tf_xasprintf("the path of TMPDIR ('%s') is too long for the allocation "
					  "sampler (at most %zu characters): no allocation was counted",
					  tmp, TF_ALLOC_DIR_MAX - 1 - (strlen(a->data) - strlen(tmp)));
	else
		a->lib = find_library(a, &a->why_not);
	if (a->lib) {
		const char *user = getenv("LD_PRELOAD");
		tf_vec_push(&a->env, user && *user ? tf_xasprintf("LD_PRELOAD=%s:%s", a->lib, user)
						   : tf_xasprintf("LD_PRELOAD=%s", a->lib));
		tf_vec_push(&a->env, tf_xasprintf("%s=%s", TF_ALLOC_ENV_DIR, a->data));
		tf_vec_push(&a->env, tf_xasprintf("%s=%u", TF_ALLOC_ENV_RATE,
						  rate ? rate : TF_ALLOC_RATE_DEFAULT));
		tf_vec_push(&a->env, tf_xasprintf("%s=%u", TF_ALLOC_ENV_STACK, stack_bytes));
		pool_open(a);
	}
	tf_vec_push(&a->env, NULL);
	*out = a;
	return 0;
}

char *const *tf_alloc_env(const tf_alloc *a)
{
	return a->env.v;
}

const char *tf_alloc_dir(const tf_alloc *a)
{
	return a->dir;
}

/* the programs without the sampler */

static bool has_file(const tf_alloc *a, uint32_t pid, uint32_t n)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%u.%u", a->data, pid, n);
	return access(path, F_OK) == 0;
}

void tf_alloc_watch(tf_alloc *a, uint32_t pid, uint64_t time)
{
	watch w;
	memset(&w, 0, sizeof(w));
	w.pid = pid;
	w.time = time;
	while (w.files < 1000 && has_file(a, pid, w.files))
		w.files++;
	/* its earlier image's watch is over: the exec ended it */
	for (size_t i = 0; i < a->watches.n; i++)
		if (a->watches.v[i].pid == pid)
			a->watches.v[i].gone = true;
	tf_vec_push(&a->watches, w);
}

/* VmHWM of `pid`, 0 when it cannot be read (gone, a zombie). */
static uint64_t read_hwm(uint32_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *at = strstr(buf, "\nVmHWM:");
	return at ? strtoull(at + 7, NULL, 10) : 0;
}

#define POLL_EVERY_NS (5 * 1000 * 1000)

void tf_alloc_poll(tf_alloc *a)
{
	uint64_t now = tf_now_ns();
	if (!a || now - a->last_poll < POLL_EVERY_NS)
		return;
	a->last_poll = now;
	pool_fill(a, POOL_BATCH);
	for (size_t i = 0; i < a->watches.n; i++) {
		watch *w = &a->watches.v[i];
		if (w->gone || w->sampled)
			continue;
		if (has_file(a, w->pid, w->files)) {
			w->sampled = true;
			continue;
		}
		uint64_t kb = read_hwm(w->pid);
		if (!kb) {
			w->gone = w->seen != 0; /* not yet in place, or gone */
			continue;
		}
		if (!w->seen) {
			/* a Go program: its runtime allocates apart from malloc */
			char exe[64];
			snprintf(exe, sizeof(exe), "/proc/%u/exe", w->pid);
			w->go = tf_exec_is_go(exe);
		}
		if (kb > w->hwm_kb)
			w->hwm_kb = kb;
		w->seen = now;
	}
}

/* reading the files */

typedef struct {
	uint32_t tid, life;       /* life: the thread's how-manieth with this tid */
	uint64_t allocs, bytes, frees; /* its counts at its last record */
	uint64_t last;            /* that record's time */
	bool ended;
} thread_counts;

typedef struct {
	tf_spool *s;
	tf_record_info *info;
	uint32_t pid;
	TF_VEC(thread_counts) threads;
	tf_buf rec;
	int rc;
} reader;

/* The thread's current life (a tid may come back after a thread ended). */
static thread_counts *thread_of(reader *r, uint32_t tid)
{
	thread_counts *found = NULL;
	for (size_t i = 0; i < r->threads.n; i++)
		if (r->threads.v[i].tid == tid && (!found || r->threads.v[i].life > found->life))
			found = &r->threads.v[i];
	if (found && !found->ended)
		return found;
	thread_counts t = { tid, found ? found->life + 1 : 0, 0, 0, 0, 0, false };
	tf_vec_push(&r->threads, t);
	return &r->threads.v[r->threads.n - 1];
}

/* The thread's allocations since its previous count, as of `time`. */
static void count(reader *r, thread_counts *t, const struct tf_alloc_counts *c, uint64_t time,
		  uint32_t kind)
{
	struct {
		uint32_t pid, tid;
		uint64_t time;
		uint64_t allocs, bytes, frees;
		uint32_t kind, pad;
	} f;

	if (c->allocs < t->allocs || c->bytes < t->bytes || c->frees < t->frees) {
		/* not this life's: a count of an earlier thread, out of order */
		return;
	}
	f.pid = r->pid;
	f.tid = t->tid;
	f.time = time;
	f.allocs = c->allocs - t->allocs;
	f.bytes = c->bytes - t->bytes;
	f.frees = c->frees - t->frees;
	f.kind = kind;
	f.pad = 0;
	t->allocs = c->allocs;
	t->bytes = c->bytes;
	t->frees = c->frees;
	if (time > t->last)
		t->last = time;
	if ((f.allocs || f.frees) && !r->rc)
		r->rc = tf_spool_append_own(r->s, TF_SPOOL_ALLOC_COUNT, &f, sizeof(f), NULL, 0);
}

/* The largest record the spool takes (its header's size is 16 bits). */
#define SPOOL_RECORD_MAX 65528

static void sample(reader *r, const struct tf_alloc_sample *in, const uint8_t *end,
		   uint64_t rate)
{
	struct {
		uint32_t pid, tid;
		uint64_t time;
		uint64_t size, ptr, rate;
		uint32_t nips, stack_len;
		uint64_t sp, bp, ip;
	} f;
	const uint8_t *ips = (const uint8_t *)(in + 1);

	if (in->nips > TF_ALLOC_MAX_FRAMES || ips + in->nips * 8 + in->stack_len > end)
		return;
	f.pid = r->pid;
	f.tid = in->h.tid;
	f.time = in->h.time;
	f.size = in->size;
	f.ptr = in->ptr;
	f.rate = in->rate ? in->rate : rate;
	f.nips = in->nips;
	f.stack_len = in->stack_len;
	f.sp = in->sp;
	f.bp = in->bp;
	f.ip = in->ip;
	size_t room = SPOOL_RECORD_MAX - 8 - sizeof(f) - f.nips * 8 - 8;
	if (f.stack_len > room)
		f.stack_len = (uint32_t)(room & ~(size_t)7);
	tf_buf_clear(&r->rec);
	tf_buf_put(&r->rec, ips, f.nips * 8);
	tf_buf_put(&r->rec, ips + in->nips * 8, f.stack_len);
	if (!r->rc)
		r->rc = tf_spool_append_own(r->s, TF_SPOOL_ALLOC, &f, sizeof(f), r->rec.ptr,
					    r->rec.len);
	r->info->alloc_samples++;
	count(r, thread_of(r, in->h.tid), &in->counts, in->h.time, 0);
}

static void note(reader *r, uint32_t tid, uint64_t time, const char *text, bool exec)
{
	struct {
		uint32_t pid, tid;
		uint64_t time;
		uint32_t exec, pad;
	} f = { r->pid, tid, time, exec, 0 };
	if (!r->rc)
		r->rc = tf_spool_append_own(r->s, TF_SPOOL_NOTE, &f, sizeof(f), text, strlen(text));
}

static void read_file(reader *r, const uint8_t *p, size_t len)
{
	const struct tf_alloc_header *h = (const void *)p;
	const struct tf_alloc_slot *slots = (const void *)(p + TF_ALLOC_HEADER);

	if (len < TF_ALLOC_RECORDS || memcmp(h->magic, TF_ALLOC_MAGIC, 8) != 0 ||
	    h->version != TF_ALLOC_VERSION || h->nslots != TF_ALLOC_SLOTS) {
		r->info->alloc_bad_files++;
		return;
	}
	r->pid = h->pid;
	r->threads.n = 0;
	/* the process image: it ran the sampler from start_ns, peaked at hwm */
	struct {
		uint32_t pid, flags;
		uint64_t time, hwm_kb, end;
	} pf = { h->pid, h->flags, h->start_ns, h->hwm_kb, h->end_ns };
	char program[sizeof(h->program) + 1];
	memcpy(program, h->program, sizeof(h->program));
	program[sizeof(h->program)] = '\0';
	if (!r->rc)
		r->rc = tf_spool_append_own(r->s, TF_SPOOL_ALLOC_PROC, &pf, sizeof(pf), program,
					    strlen(program));
	r->info->alloc_processes++;
	if (h->flags & TF_ALLOC_POOLED)
		r->info->alloc_pooled++;
	if (h->flags & TF_ALLOC_LIVE_FULL)
		note(r, h->pid, h->start_ns, "a process held more sampled blocks at once than the "
		     "sampler tracks (24,576): some frees were not matched, and its live heap "
		     "looks larger than it was", false);

	uint64_t last = h->start_ns;
	if (h->tail < len - TF_ALLOC_RECORDS)
		len = TF_ALLOC_RECORDS + h->tail;
	for (size_t off = TF_ALLOC_RECORDS; off + sizeof(struct tf_alloc_rec) <= len;) {
		const struct tf_alloc_rec *rec = (const void *)(p + off);
		if (rec->size < sizeof(*rec) || (rec->size & 7) || off + rec->size > len)
			break; /* the end of what was written (type 0: being written) */
		const uint8_t *end = p + off + rec->size;
		if (rec->time > last)
			last = rec->time;
		switch (rec->type) {
		case TF_ALLOC_REC_SAMPLE:
			if (rec->size >= sizeof(struct tf_alloc_sample))
				sample(r, (const void *)rec, end, h->rate);
			break;
		case TF_ALLOC_REC_FREE:
			if (rec->size >= sizeof(struct tf_alloc_free)) {
				const struct tf_alloc_free *fr = (const void *)rec;
				struct {
					uint32_t pid, tid;
					uint64_t time, ptr;
				} f = { r->pid, rec->tid, rec->time, fr->ptr };
				if (!r->rc)
					r->rc = tf_spool_append_own(r->s, TF_SPOOL_ALLOC_FREE, &f,
								    sizeof(f), NULL, 0);
			}
			break;
		case TF_ALLOC_REC_MARK:
			if (rec->size >= sizeof(struct tf_alloc_mark)) {
				const struct tf_alloc_mark *m = (const void *)rec;
				thread_counts *t = thread_of(r, rec->tid);
				count(r, t, &m->counts, rec->time, m->kind);
				if (m->kind == TF_ALLOC_MARK_THREAD_END)
					t->ended = true;
			}
			break;
		case TF_ALLOC_REC_NOTE: {
			const struct tf_alloc_note *nt = (const void *)rec;
			const char *text = (const char *)rec + sizeof(struct tf_alloc_note);
			if (rec->size < sizeof(*nt))
				break;
			if (memchr(text, '\0', (size_t)((const char *)end - text))) {
				char *msg = rec->pad ? tf_xasprintf("%s: %s", program[0] ? program
									      : "a process", text)
						     : tf_xstrdup(text);
				/* a vfork child writes into its parent's file */
				uint32_t pid = r->pid;
				r->pid = nt->pid ? nt->pid : pid;
				note(r, rec->tid, rec->time, msg, !rec->pad);
				r->pid = pid;
				free(msg);
			}
			break;
		}
		default:
			break;
		}
		off += rec->size;
	}

	/* each thread's last word: its slot (a thread killed between two
	 * records counted on), at its end, else its last record's moment */
	uint32_t used = h->slots_used < TF_ALLOC_SLOTS ? h->slots_used : TF_ALLOC_SLOTS;
	for (uint32_t i = 0; i < used; i++) {
		const struct tf_alloc_slot *sl = &slots[i];
		if (!sl->tid)
			continue;
		/* the slot's life: the first of its tid not yet closed by a
		 * slot, in the order the slots were claimed */
		thread_counts *t = NULL;
		for (size_t k = 0; k < r->threads.n && !t; k++)
			if (r->threads.v[k].tid == sl->tid && r->threads.v[k].life != UINT32_MAX)
				t = &r->threads.v[k];
		thread_counts fresh = { sl->tid, 0, 0, 0, 0, h->start_ns, false };
		if (!t) {
			tf_vec_push(&r->threads, fresh);
			t = &r->threads.v[r->threads.n - 1];
		}
		struct tf_alloc_counts c = { sl->allocs, sl->bytes, sl->frees };
		uint64_t when = sl->end_ns ? sl->end_ns : h->end_ns ? h->end_ns : TF_MAX(t->last, last);
		count(r, t, &c, when, TF_ALLOC_MARK_EXIT);
		t->life = UINT32_MAX;
	}
}

static int by_number(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	long px = strtol(x, NULL, 10), py = strtol(y, NULL, 10);
	if (px != py)
		return px < py ? -1 : 1;
	return strcmp(x, y);
}

int tf_alloc_collect(tf_alloc *a, tf_spool *s, tf_record_info *info)
{
	reader r;
	DIR *d;
	TF_VEC(char *) names = { 0 };

	memset(&r, 0, sizeof(r));
	r.s = s;
	r.info = info;
	info->memory = true;
	if (a->why_not) {
		r.pid = 0;
		note(&r, 0, 0, a->why_not, false);
	}
	/* the files read below still hold their room: short of one more,
	 * the processes that came later may have found none */
	struct statvfs vfs;
	if (a->full || (statvfs(a->data, &vfs) == 0 &&
			(uint64_t)vfs.f_bavail * vfs.f_frsize < TF_ALLOC_POOL_SIZE)) {
		/* TMPDIR: the directory's own less its last name */
		int len = (int)(strrchr(a->dir, '/') - a->dir);
		char *text = tf_xasprintf("TMPDIR ('%.*s') ran out of room for the allocation "
					  "sampler's files (about 1 MiB a process until the suite "
					  "ends): processes that found none were not counted", len,
					  a->dir);
		r.pid = 0;
		note(&r, 0, 0, text, false);
		free(text);
	}
	d = opendir(a->data);
	for (struct dirent *e; d && (e = readdir(d)) != NULL;)
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
			tf_vec_push(&names, tf_xstrdup(e->d_name));
	if (d)
		closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof(*names.v), by_number);
	for (size_t i = 0; i < names.n && !r.rc; i++) {
		char *path = tf_xasprintf("%s/%s", a->data, names.v[i]);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= TF_ALLOC_RECORDS) {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (m != MAP_FAILED) {
				read_file(&r, m, (size_t)st.st_size);
				munmap(m, (size_t)st.st_size);
			} else {
				info->alloc_bad_files++;
			}
		} else {
			info->alloc_bad_files++;
		}
		if (fd >= 0)
			close(fd);
		/* read: it goes now, so a long suite's files do not pile up */
		unlink(path);
		free(path);
	}
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	tf_vec_free(&names);
	/* the peaks read of the programs without the sampler */
	for (size_t i = 0; i < a->watches.n && !r.rc; i++) {
		const watch *w = &a->watches.v[i];
		struct {
			uint32_t pid, go;
			uint64_t time, hwm_kb;
		} f = { w->pid, w->go, w->seen, w->hwm_kb };
		if (!w->sampled && w->hwm_kb)
			r.rc = tf_spool_append_own(s, TF_SPOOL_RSS, &f, sizeof(f), NULL, 0);
	}
	tf_vec_free(&r.threads);
	tf_buf_free(&r.rec);
	return r.rc;
}

void tf_alloc_free(tf_alloc *a)
{
	if (!a)
		return;
	if (a->ctl >= 0)
		close(a->ctl);
	if (a->dir)
		tf_rmtree(a->dir);
	for (size_t i = 0; i < a->env.n; i++)
		free(a->env.v[i]);
	tf_vec_free(&a->env);
	tf_vec_free(&a->watches);
	free(a->dir);
	free(a->data);
	free(a->lib);
	free(a->why_not);
	free(a);
}

/*
 * files.c - the files behind mappings: identity, pinning, and the [vdso].
 *
 * A mapping names a file by path, device and inode. Paths lie (a test suite
 * rebuilds, deletes and replaces its binaries while it runs), so a file is
 * known by all three, and while the run is going on tf_symbolizer_live()
 * opens each new file at once and keeps the descriptor: a binary deleted a
 * second later stays readable, and its inode cannot be reused under us.
 * Where the path already points elsewhere, /proc/PID/map_files (the very
 * file the process mapped, memfds included) or /proc/PID/exe is used.
 *
 * The [vdso] has no file at all; every process on this kernel maps the same
 * image, so testflame's own (as /proc/self/maps shows it) is copied once
 * into the cache directory.
 */
#include "symbolize/symbolize_int.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const char deleted_suffix[] = " (deleted)";

int tf_sym_classify(const char *name)
{
	if (!name[0] || strncmp(name, "//anon", 6) == 0)
		return TF_SYM_MAP_ANON;
	if (strcmp(name, "[vdso]") == 0)
		return TF_SYM_MAP_VDSO;
	if (name[0] != '/')
		return TF_SYM_MAP_ANON; /* [heap], [stack], [anon:x], anon_inode:... */
	if (strncmp(name, "/dev/", 5) == 0 || strncmp(name, "/SYSV", 5) == 0 ||
	    strncmp(name, "/anon_hugepage", 14) == 0)
		return TF_SYM_MAP_ANON; /* shared anonymous memory, devices */
	return TF_SYM_MAP_FILE;
}

typedef struct {
	const char *path;
	size_t plen;
	uint32_t maj, min;
	uint64_t ino, gen;
	const uint8_t *bid;
	uint32_t bidlen;
} file_key;

static uint64_t key_hash(const file_key *k)
{
	uint64_t h = tf_hash_bytes(k->path, k->plen, k->ino);
	h = tf_hash_combine(h, ((uint64_t)k->maj << 32) | k->min);
	h = tf_hash_combine(h, k->gen);
	return k->bidlen ? tf_hash_combine(h, tf_hash_bytes(k->bid, k->bidlen, 0)) : h;
}

static bool file_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_symbolizer *s = ctx;
	const tf_sym_file *f = &s->files.v[idx];
	const file_key *k = key;
	return f->ino == k->ino && f->maj == k->maj && f->min == k->min &&
	       f->ino_gen == k->gen && f->build_id_len == k->bidlen &&
	       (!k->bidlen || memcmp(f->build_id, k->bid, k->bidlen) == 0) && !f->is_vdso &&
	       strlen(f->path) == k->plen && (!k->plen || memcmp(f->path, k->path, k->plen) == 0);
}

static const char *basename_of(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static uint32_t file_add(tf_symbolizer *s, const file_key *k, bool deleted)
{
	tf_sym_file f;

	memset(&f, 0, sizeof(f));
	f.path = tf_xstrndup(k->path, k->plen);
	f.maj = k->maj;
	f.min = k->min;
	f.ino = k->ino;
	f.ino_gen = k->gen;
	f.build_id_len = TF_MIN(k->bidlen, (uint32_t)sizeof(f.build_id));
	if (f.build_id_len)
		memcpy(f.build_id, k->bid, f.build_id_len);
	f.fd = -1;
	f.deleted = deleted;
	f.state = TF_SYM_FILE_UNTRIED;
	f.module = UINT32_MAX;
	f.name = tf_strtab_intern(&s->strs, f.path, k->plen);
	const char *b = basename_of(f.path);
	f.base = tf_strtab_intern(&s->strs, b, strlen(b));
	uint32_t idx = (uint32_t)s->files.n;
	tf_vec_push(&s->files, f);
	tf_htab_insert(&s->file_index, key_hash(k), idx);
	return idx;
}

uint32_t tf_sym_file_for_event(tf_symbolizer *s, const tf_rec_event *ev, bool *deleted)
{
	const char *name = ev->mmap.filename ? ev->mmap.filename : "";
	size_t len = strlen(name), sl = sizeof(deleted_suffix) - 1;
	file_key k;
	uint32_t idx;

	*deleted = len > sl && strcmp(name + len - sl, deleted_suffix) == 0;
	if (*deleted)
		len -= sl;
	k.path = name;
	k.plen = len;
	k.maj = ev->mmap.maj;
	k.min = ev->mmap.min;
	k.ino = ev->mmap.ino;
	k.gen = ev->mmap.ino_generation;
	k.bid = ev->mmap.build_id;
	k.bidlen = ev->mmap.build_id ? TF_MIN(ev->mmap.build_id_len, 32u) : 0;
	idx = tf_htab_find(&s->file_index, key_hash(&k), file_eq, s, &k);
	if (idx == TF_HTAB_NONE)
		idx = file_add(s, &k, *deleted);
	return idx;
}

/*
 * Is the open file the one the mapping named? Device numbers are compared
 * loosely: overlayfs and btrfs subvolumes show stat() a device other than
 * the one the kernel reports for the mapping, while the inode agrees.
 */
static bool file_matches(const tf_sym_file *f, int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	if (f->ino)
		return (uint64_t)st.st_ino == f->ino;
	if (f->build_id_len) {
		bool ok = false;
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		const void *bid;
		ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bid) : -1;
		if (n > 0 && (uint32_t)n == f->build_id_len && memcmp(bid, f->build_id, (size_t)n) == 0)
			ok = true;
		elf_end(elf);
		return ok;
	}
	return true;
}

static int open_checked(tf_symbolizer *s, const tf_sym_file *f, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == EMFILE && !s->rlimit_raised) {
		/* a suite may map thousands of binaries: use what we may */
		struct rlimit rl;
		s->rlimit_raised = true;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
	}
	if (fd >= 0 && !file_matches(f, fd)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void tf_sym_file_adopt(tf_symbolizer *s, uint32_t idx, int fd)
{
	tf_sym_file *f = &s->files.v[idx];

	if (f->fd >= 0 || f->state != TF_SYM_FILE_UNTRIED)
		return;
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own >= 0 && !file_matches(f, own)) {
		close(own);
		own = -1;
	}
	if (own >= 0) {
		f->fd = own;
		s->stats.pinned++;
	}
}

void tf_sym_file_pin(tf_symbolizer *s, uint32_t idx, uint32_t pid, uint64_t start, uint64_t end)
{
	tf_sym_file *f = &s->files.v[idx];
	char buf[96];
	int fd = -1;

	if (f->fd >= 0 || f->state != TF_SYM_FILE_UNTRIED)
		return;
	if (!f->deleted)
		fd = open_checked(s, f, f->path);
	if (fd < 0 && pid) {
		snprintf(buf, sizeof(buf), "/proc/%u/map_files/%llx-%llx", pid,
			 (unsigned long long)start, (unsigned long long)end);
		fd = open_checked(s, f, buf);
	}
	if (fd < 0 && pid && (f->ino || f->build_id_len)) {
		snprintf(buf, sizeof(buf), "/proc/%u/exe", pid);
		fd = open_checked(s, f, buf);
	}
	if (fd >= 0) {
		f->fd = fd;
		s->stats.pinned++;
	}
}

bool tf_sym_file_module(tf_symbolizer *s, uint32_t idx)
{
	tf_sym_file *f = &s->files.v[idx];
	int fd;

	if (f->state == TF_SYM_FILE_OK)
		return true;
	if (f->state != TF_SYM_FILE_UNTRIED)
		return false;
	if (f->fd >= 0)
		fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	else if (!f->deleted)
		fd = open_checked(s, f, f->path);
	else
		fd = -1;
	if (fd < 0) {
		f->state = TF_SYM_FILE_MISSING;
		s->stats.missing_files++;
		return false;
	}
	if (tf_sym_module_open(s, f, fd) != 0) {
		f->state = TF_SYM_FILE_BAD;
		s->stats.bad_files++;
		return false;
	}
	f->state = TF_SYM_FILE_OK;
	return true;
}

static const char *cache_dir(tf_symbolizer *s)
{
	if (s->cache_dir)
		return s->cache_dir;
	if (s->opts.cache_dir) {
		if (tf_mkdir_p(s->opts.cache_dir, 0700) != 0)
			return NULL;
		s->cache_dir = tf_xstrdup(s->opts.cache_dir);
		return s->cache_dir;
	}
	const char *tmp = getenv("TMPDIR");
	char *tmpl = tf_xasprintf("%s/testflame-sym.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl)) {
		free(tmpl);
		return NULL;
	}
	s->cache_dir = tmpl;
	s->own_cache_dir = true;
	return s->cache_dir;
}

/* Our own [vdso] mapping's bounds, from /proc/self/maps. */
static bool own_vdso(uint64_t *start, uint64_t *end)
{
	tf_buf b = TF_BUF_INIT;
	bool found = false;

	if (tf_file_read(&b, "/proc/self/maps") != 0) {
		tf_buf_free(&b);
		return false;
	}
	for (char *line = b.ptr; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		size_t n = strlen(line);
		if (n > 6 && strcmp(line + n - 6, "[vdso]") == 0) {
			unsigned long long a, z;
			if (sscanf(line, "%llx-%llx", &a, &z) == 2) {
				*start = a;
				*end = z;
				found = true;
			}
			break;
		}
		line = nl ? nl + 1 : NULL;
	}
	tf_buf_free(&b);
	return found;
}

uint32_t tf_sym_vdso_file(tf_symbolizer *s)
{
	uint64_t start, end;
	const char *dir;

	if (s->vdso_file != UINT32_MAX || s->vdso_failed)
		return s->vdso_file;
	s->vdso_failed = true;
	if (!own_vdso(&start, &end) || end - start > (64u << 20) || !(dir = cache_dir(s)))
		return UINT32_MAX;
	const void *image = (const void *)(uintptr_t)start;
	size_t size = (size_t)(end - start);
	char *path = tf_xasprintf("%s/vdso-%016llx.so", dir,
				  (unsigned long long)tf_hash_bytes(image, size, 0));
	struct stat st;
	if ((stat(path, &st) != 0 || (size_t)st.st_size != size) &&
	    tf_file_write_atomic(path, image, size) != 0) {
		free(path);
		return UINT32_MAX;
	}
	file_key k = { path, strlen(path), 0, 0, 0, 0, NULL, 0 };
	uint32_t idx = file_add(s, &k, false);
	tf_sym_file *f = &s->files.v[idx];
	f->is_vdso = true;
	f->name = f->base = tf_strtab_intern(&s->strs, "[vdso]", 6);
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	s->vdso_file = idx;
	s->vdso_failed = false;
	return idx;
}

void tf_sym_files_free(tf_symbolizer *s)
{
	for (size_t i = 0; i < s->files.n; i++) {
		tf_sym_file *f = &s->files.v[i];
		if (f->fd >= 0)
			close(f->fd);
		if (f->is_vdso && s->own_cache_dir)
			unlink(f->path);
		free(f->path);
	}
	tf_vec_free(&s->files);
	tf_htab_free(&s->file_index);
	if (s->own_cache_dir && s->cache_dir)
		rmdir(s->cache_dir);
	free(s->cache_dir);
	s->cache_dir = NULL;
}

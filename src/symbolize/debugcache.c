/*
 * debugcache.c - separate debug info, kept uncompressed in the user cache.
 *
 * Debian's debug packages (libc6-dbg and the like) ship their DWARF in
 * SHF_COMPRESSED sections, and libdw inflates every one of them when it
 * opens the file: about 40 ms for libc's, on every run, more than
 * symbolizing the run itself. So the first run that needs such a file
 * writes a copy with the sections inflated to
 * <cache>/debug/<build-id>.debug (temp file, then rename); later runs hand
 * libdwfl the copy, which it maps and reads in place. A build-id names the
 * contents, so the copy cannot go stale; one that is not an ELF file with
 * that build-id is ignored and written again.
 *
 * Debug info inside the binary itself (gcc -g, the usual case for the code
 * under test) never comes here: libdwfl only looks for a separate file
 * when the binary has none.
 */
#include "symbolize/symbolize_int.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Bigger debug files are left as they are: the copy would cost more disk
 * than the time it saves is worth. */
#define DEBUGCACHE_MAX_SOURCE (256u << 20)

static bool has_build_id(int fd, const unsigned char *bits, int n)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *p;
	bool ok = elf && elf_kind(elf) == ELF_K_ELF &&
		  dwelf_elf_gnu_build_id(elf, &p) == n && memcmp(p, bits, (size_t)n) == 0;
	if (elf)
		elf_end(elf);
	return ok;
}

static bool has_compressed(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool found = false;

	if (!elf)
		return false;
	for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		found = gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
			sh.sh_type != SHT_NOBITS;
	}
	elf_end(elf);
	return found;
}

static bool copy_fd(int from, int to)
{
	char buf[1 << 16];
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(from, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		if (n == 0)
			return true;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(to, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return false;
			done += w;
		}
		off += n;
	}
}

/* A copy of `fd` with its compressed sections inflated, at `path`. */
static bool write_plain(int fd, const char *dir, const char *path)
{
	char *tmp = tf_xasprintf("%s.tmp.%ld", path, (long)getpid());
	int out = -1;
	Elf *elf = NULL;
	bool ok = false;

	if (tf_mkdir_p(dir, 0700) != 0)
		goto done;
	out = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0 || !copy_fd(fd, out))
		goto done;
	elf = elf_begin(out, ELF_C_RDWR, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto done;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			goto done;
		if ((sh.sh_flags & SHF_COMPRESSED) && sh.sh_type != SHT_NOBITS &&
		    elf_compress(scn, 0, 0) < 0)
			goto done;
	}
	/* libelf lays the sections out again around their new sizes */
	if (elf_update(elf, ELF_C_WRITE) < 0)
		goto done;
	elf_end(elf);
	elf = NULL;
	ok = close(out) == 0 && rename(tmp, path) == 0;
	out = -1;
done:
	if (elf)
		elf_end(elf);
	if (out >= 0)
		close(out);
	if (!ok)
		unlink(tmp);
	free(tmp);
	tf_error_clear();
	return ok;
}

static int open_cached(const char *path, const unsigned char *bits, int n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && !has_build_id(fd, bits, n)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The file's CRC-32 (zlib's, as .gnu_debuglink records it). */
static bool crc_matches(int fd, GElf_Word want)
{
	unsigned char buf[1 << 16];
	uLong crc = crc32(0, NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	return n == 0 && (GElf_Word)crc == want;
}

/* .gnu_debuglink, where gdb and libdwfl look: next to the binary, in its
 * .debug/, and under /usr/lib/debug. */
static int find_debuglink(const char *file_name, const char *link, GElf_Word crc,
			  const unsigned char *bits, int n, char **found)
{
	if (!file_name || !link || !*link || strchr(link, '/'))
		return -1;
	const char *slash = strrchr(file_name, '/');
	char *dir = slash ? tf_xstrndup(file_name, (size_t)(slash - file_name)) : tf_xstrdup(".");
	char *cand[3] = {
		tf_xasprintf("%s/%s", dir, link),
		tf_xasprintf("%s/.debug/%s", dir, link),
		dir[0] == '/' ? tf_xasprintf("/usr/lib/debug%s/%s", dir, link) : NULL,
	};
	int fd = -1;

	for (int i = 0; i < 3 && fd < 0; i++) {
		if (!cand[i] || strcmp(cand[i], file_name) == 0)
			continue;
		fd = open(cand[i], O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !(n > 0 ? has_build_id(fd, bits, n) : crc_matches(fd, crc))) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			*found = cand[i];
			cand[i] = NULL;
		}
	}
	for (int i = 0; i < 3; i++)
		free(cand[i]);
	free(dir);
	return fd;
}

/*
 * Not dwfl_standard_find_debuginfo first: when it finds the file by
 * build-id it keeps its own Elf handle on it in the module, and libdwfl
 * then reads that one whatever fd we return. And when it finds nothing it
 * asks debuginfod, which means dlopen()ing libdebuginfod and a second
 * libcurl with its TLS stack (10 ms and more, for every binary without
 * debug info, such as /bin/sh). So: the cache, the build-id directory
 * (where the -dbg packages put their files), .gnu_debuglink; the standard
 * search, debuginfod included, only when DEBUGINFOD_URLS asks for a server.
 */
int tf_sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	tf_symbolizer *s = *userdata;
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	struct stat st;
	int n, fd = -1;
	char *id = NULL, *dir = NULL, *path = NULL, *sys = NULL;
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (urls && *urls)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || n > 64)
		goto debuglink;
	id = tf_sym_hex(bits, (size_t)n);
	if (s && s->opts.persist_dir) {
		dir = tf_xasprintf("%s/debug", s->opts.persist_dir);
		path = tf_xasprintf("%s/%s.debug", dir, id);
		if ((fd = open_cached(path, bits, n)) >= 0) {
			s->stats.debug_cached++;
			goto found;
		}
	}
	sys = tf_xasprintf("/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	int sfd = open_cached(sys, bits, n);
	if (sfd < 0)
		goto debuglink;
	if (path && fstat(sfd, &st) == 0 && (uint64_t)st.st_size <= DEBUGCACHE_MAX_SOURCE &&
	    has_compressed(sfd) && write_plain(sfd, dir, path) &&
	    (fd = open_cached(path, bits, n)) >= 0) {
		s->stats.debug_uncompressed++;
		close(sfd);
		goto found;
	}
	/* nothing to gain from a copy, or none could be made */
	fd = sfd;
	free(path);
	path = sys;
	sys = NULL;
found:
	*debuginfo_file_name = path;
	free(sys);
	free(dir);
	free(id);
	return fd;
debuglink:
	free(sys);
	free(path);
	free(dir);
	free(id);
	fd = find_debuglink(file_name, debuglink_file, debuglink_crc, bits, n > 0 ? n : 0,
			    debuginfo_file_name);
	if (fd < 0)
		errno = ENOENT;
	return fd;
}

/*
 * execcheck.c - whether a program may run with the allocation sampler
 * preloaded (see execcheck.h): its ELF header, program headers and
 * DT_NEEDED names, read with pread into stack buffers.
 *
 * A program the sampler must not be preloaded into: one that links a
 * sanitizer's runtime (libasan, libtsan, liblsan, libhwasan: they own
 * malloc, and ASan's dies when another library comes first), and one of
 * another ABI than the sampler's (a 32-bit program: the loader would print
 * that it cannot preload a 64-bit library, into the suite's output).
 */
#include "execcheck.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const sanitizer_libs[] = {
	"libasan.so", "libtsan.so", "liblsan.so", "libhwasan.so", "libmsan.so", NULL,
};

static int pread_full(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static void say(char *why, size_t whylen, const char *s)
{
	size_t n = strlen(s);
	if (!whylen)
		return;
	if (n >= whylen)
		n = whylen - 1;
	memcpy(why, s, n);
	why[n] = '\0';
}

#define MAX_PHDRS 64
#define MAX_DYN 512

static int check_elf(int fd, char *why, size_t whylen)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[MAX_PHDRS];
	uint64_t dyn_off = 0, dyn_size = 0;
	int has_interp = 0;

	if (pread_full(fd, &eh, sizeof(eh), 0) != 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return TF_EXEC_UNKNOWN;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		say(why, whylen, "another ABI than x86-64");
		return TF_EXEC_ABI;
	}
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > MAX_PHDRS ||
	    pread_full(fd, ph, eh.e_phnum * sizeof(Elf64_Phdr), (off_t)eh.e_phoff) != 0)
		return TF_EXEC_UNKNOWN;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP)
			has_interp = 1;
		else if (ph[i].p_type == PT_DYNAMIC) {
			dyn_off = ph[i].p_offset;
			dyn_size = ph[i].p_filesz;
		}
	}
	if (!has_interp)
		return TF_EXEC_STATIC;
	if (!dyn_size)
		return TF_EXEC_OK;

	/* DT_STRTAB is an address: the PT_LOAD that holds it gives its offset */
	Elf64_Dyn dyn[64];
	uint64_t strtab = 0, needed[64];
	size_t nneeded = 0, ndyn = dyn_size / sizeof(Elf64_Dyn);
	if (ndyn > MAX_DYN)
		ndyn = MAX_DYN;
	for (size_t at = 0; at < ndyn; at += 64) {
		size_t k = ndyn - at < 64 ? ndyn - at : 64;
		if (pread_full(fd, dyn, k * sizeof(Elf64_Dyn),
			       (off_t)(dyn_off + at * sizeof(Elf64_Dyn))) != 0)
			return TF_EXEC_UNKNOWN;
		for (size_t i = 0; i < k; i++) {
			if (dyn[i].d_tag == DT_NULL)
				at = ndyn;
			else if (dyn[i].d_tag == DT_STRTAB)
				strtab = dyn[i].d_un.d_ptr;
			else if (dyn[i].d_tag == DT_NEEDED && nneeded < 64)
				needed[nneeded++] = dyn[i].d_un.d_val;
			if (at == ndyn)
				break;
		}
	}
	uint64_t stroff = 0;
	int found = 0;
	for (int i = 0; i < eh.e_phnum && !found; i++)
		if (ph[i].p_type == PT_LOAD && strtab >= ph[i].p_vaddr &&
		    strtab < ph[i].p_vaddr + ph[i].p_filesz) {
			stroff = strtab - ph[i].p_vaddr + ph[i].p_offset;
			found = 1;
		}
	if (!found)
		return TF_EXEC_OK;
	for (size_t i = 0; i < nneeded; i++) {
		char name[64];
		memset(name, 0, sizeof(name));
		if (pread(fd, name, sizeof(name) - 1, (off_t)(stroff + needed[i])) <= 0)
			continue;
		if (tf_exec_is_sanitizer_lib(name)) {
			say(why, whylen, name);
			return TF_EXEC_SANITIZER;
		}
	}
	return TF_EXEC_OK;
}

int tf_exec_is_sanitizer_lib(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (const char *const *s = sanitizer_libs; *s; s++)
		if (strncmp(base, *s, strlen(*s)) == 0)
			return 1;
	return 0;
}

int tf_exec_check(const char *path, char *why, size_t whylen)
{
	char line[256];
	int rc = TF_EXEC_UNKNOWN;

	say(why, whylen, "");
	for (int depth = 0; depth < 2 && path; depth++) {
		struct stat st;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return TF_EXEC_UNKNOWN;
		memset(line, 0, sizeof(line));
		if (pread(fd, line, sizeof(line) - 1, 0) < 2) {
			close(fd);
			return TF_EXEC_UNKNOWN;
		}
		if (line[0] == '#' && line[1] == '!') {
			/* a script: the kernel runs its interpreter */
			close(fd);
			char *p = line + 2;
			while (*p == ' ' || *p == '\t')
				p++;
			char *e = p;
			while (*e && *e != ' ' && *e != '\t' && *e != '\n')
				e++;
			*e = '\0';
			path = *p == '/' ? p : NULL;
			continue;
		}
		rc = check_elf(fd, why, whylen);
		if (rc == TF_EXEC_OK && fstat(fd, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)))
			rc = TF_EXEC_SETUID;
		close(fd);
		return rc;
	}
	return rc;
}

int tf_exec_is_go(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh[256], strs;
	char names[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC), go = 0;

	if (fd < 0)
		return 0;
	if (pread_full(fd, &eh, sizeof(eh), 0) == 0 && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof(Elf64_Shdr) &&
	    eh.e_shnum && eh.e_shnum <= 256 && eh.e_shstrndx < eh.e_shnum &&
	    pread_full(fd, sh, eh.e_shnum * sizeof(Elf64_Shdr), (off_t)eh.e_shoff) == 0) {
		strs = sh[eh.e_shstrndx];
		size_t n = strs.sh_size < sizeof(names) - 1 ? strs.sh_size : sizeof(names) - 1;
		memset(names, 0, sizeof(names));
		if (pread_full(fd, names, n, (off_t)strs.sh_offset) == 0)
			for (int i = 0; i < eh.e_shnum && !go; i++)
				if (sh[i].sh_name < n && (strcmp(names + sh[i].sh_name, ".go.buildinfo") == 0 ||
							  strcmp(names + sh[i].sh_name, ".gopclntab") == 0))
					go = 1;
	}
	close(fd);
	return go;
}

int tf_exec_strip_preload(const char *value, const char *lib, char *out, size_t outlen)
{
	size_t n = 0, liblen = strlen(lib);
	const char *p = value;

	if (!outlen)
		return -1;
	while (*p) {
		while (*p == ':' || *p == ' ')
			p++;
		const char *e = p;
		while (*e && *e != ':' && *e != ' ')
			e++;
		if (e == p)
			break;
		const char *base = p;
		for (const char *q = p; q < e; q++)
			if (*q == '/')
				base = q + 1;
		if (!((size_t)(e - base) == liblen && strncmp(base, lib, liblen) == 0)) {
			size_t need = (size_t)(e - p) + (n ? 1 : 0);
			if (n + need + 1 > outlen)
				return -1;
			if (n)
				out[n++] = ':';
			memcpy(out + n, p, (size_t)(e - p));
			n += (size_t)(e - p);
		}
		p = e;
	}
	out[n] = '\0';
	return (int)n;
}

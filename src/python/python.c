/*
 * python.c - CPython's frames, read from an interpreter's memory: which
 * fields hold them in each version, how to find an interpreter in its
 * binary, and the walk from a thread to its Python stack (python.h).
 *
 * The walk, as py-spy and Austin do it from outside the process:
 *
 *   _PyRuntime.interpreters.head -> PyInterpreterState (-> next)
 *     .threads.head (tstate_head before 3.11) -> PyThreadState (-> next)
 *       the one of the sampled thread: native_thread_id (3.11+), else the
 *       kernel tid inside glibc's struct pthread at thread_id
 *       -> its innermost frame: tstate->frame (PyFrameObject, up to 3.10),
 *          tstate->cframe->current_frame (_PyInterpreterFrame, 3.11, 3.12),
 *          tstate->current_frame (3.13)
 *         -> f_back / previous, each with its code object and the
 *            instruction it executes (f_lasti, prev_instr, instr_ptr)
 *
 * The offsets below come from each version's headers (offsetof() over
 * Include/internal with Py_BUILD_CORE, x86-64 release builds); 3.13 and
 * later publish theirs in _Py_DebugOffsets at the start of _PyRuntime,
 * which is initialised data, so tf_pybin_probe() reads them from the file.
 *
 * The thread runs while it is read (under perf), so nothing read is
 * trusted: every code object's type must be PyCode_Type, counts and sizes
 * are bounded, and a chain that stops making sense ends the walk with what
 * it had (TF_EINVAL). Code objects are decoded once per process (name,
 * file, line table) and found again by address; a cached one is checked
 * against its name and file pointers and first line at every use, so
 * memory reused by another code object is decoded afresh.
 */
#include "testflame/python.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { FRAMES_OBJECT, FRAMES_INTERP };             /* PyFrameObject, _PyInterpreterFrame */
enum { LASTI_BYTES, LASTI_UNITS, INSTR_PREV, INSTR_CUR };
enum { TABLE_LNOTAB, TABLE_LINETABLE, TABLE_LOCATIONS };

#define NONE UINT32_MAX

struct tf_pylayout {
	unsigned minor;
	uint8_t frames, lasti, table;
	/* _PyRuntimeState */
	uint32_t rt_interp_head;
	/* PyInterpreterState */
	uint32_t is_next, is_threads;
	/* PyThreadState: ts_frame is frame (<= 3.10), cframe (3.11, 3.12) or
	 * current_frame (3.13+); cf_frame the frame in _PyCFrame (or NONE) */
	uint32_t ts_next, ts_thread_id, ts_native_id, ts_frame, cf_frame;
	/* frames */
	uint32_t fr_back, fr_code, fr_lasti, fr_entry, fr_owner, fr_size;
	/* PyCodeObject */
	uint32_t co_filename, co_name, co_qualname, co_firstlineno, co_table, co_code;
	/* objects */
	uint32_t ob_type, bytes_size, bytes_data, str_length, str_state, str_ascii, str_compact;
};

/* Owner of a _PyInterpreterFrame: a C-stack shim (3.12+), not Python code. */
#define FRAME_OWNED_BY_CSTACK 3

/* Objects (x86-64, no Py_TRACE_REFS): ob_type; bytes' size and data;
 * str's length, state, and where the characters of a compact ASCII and a
 * compact non-ASCII string start (PyASCIIObject lost its wstr in 3.12). */
#define OBJECTS_UP_TO_311 .ob_type = 8, .bytes_size = 16, .bytes_data = 32, .str_length = 16, \
	.str_state = 32, .str_ascii = 48, .str_compact = 72
#define OBJECTS_FROM_312 .ob_type = 8, .bytes_size = 16, .bytes_data = 32, .str_length = 16, \
	.str_state = 32, .str_ascii = 40, .str_compact = 56

static const struct tf_pylayout layouts[] = {
	{ .minor = 7, OBJECTS_UP_TO_311,
	  .frames = FRAMES_OBJECT, .lasti = LASTI_BYTES, .table = TABLE_LNOTAB,
	  .rt_interp_head = 24, .is_next = 0, .is_threads = 8,
	  .ts_next = 8, .ts_thread_id = 176, .ts_native_id = NONE, .ts_frame = 24, .cf_frame = NONE,
	  .fr_back = 24, .fr_code = 32, .fr_lasti = 104, .fr_entry = NONE, .fr_owner = NONE,
	  .fr_size = 112,
	  .co_filename = 96, .co_name = 104, .co_qualname = NONE, .co_firstlineno = 36,
	  .co_table = 112, .co_code = NONE },
	{ .minor = 8, OBJECTS_UP_TO_311,
	  .frames = FRAMES_OBJECT, .lasti = LASTI_BYTES, .table = TABLE_LNOTAB,
	  .rt_interp_head = 32, .is_next = 0, .is_threads = 8,
	  .ts_next = 8, .ts_thread_id = 176, .ts_native_id = NONE, .ts_frame = 24, .cf_frame = NONE,
	  .fr_back = 24, .fr_code = 32, .fr_lasti = 104, .fr_entry = NONE, .fr_owner = NONE,
	  .fr_size = 112,
	  .co_filename = 104, .co_name = 112, .co_qualname = NONE, .co_firstlineno = 40,
	  .co_table = 120, .co_code = NONE },
	{ .minor = 9, OBJECTS_UP_TO_311,
	  .frames = FRAMES_OBJECT, .lasti = LASTI_BYTES, .table = TABLE_LNOTAB,
	  .rt_interp_head = 32, .is_next = 0, .is_threads = 8,
	  .ts_next = 8, .ts_thread_id = 176, .ts_native_id = NONE, .ts_frame = 24, .cf_frame = NONE,
	  .fr_back = 24, .fr_code = 32, .fr_lasti = 104, .fr_entry = NONE, .fr_owner = NONE,
	  .fr_size = 112,
	  .co_filename = 104, .co_name = 112, .co_qualname = NONE, .co_firstlineno = 40,
	  .co_table = 120, .co_code = NONE },
	{ .minor = 10, OBJECTS_UP_TO_311,
	  .frames = FRAMES_OBJECT, .lasti = LASTI_UNITS, .table = TABLE_LINETABLE,
	  .rt_interp_head = 32, .is_next = 0, .is_threads = 8,
	  .ts_next = 8, .ts_thread_id = 176, .ts_native_id = NONE, .ts_frame = 24, .cf_frame = NONE,
	  .fr_back = 24, .fr_code = 32, .fr_lasti = 96, .fr_entry = NONE, .fr_owner = NONE,
	  .fr_size = 104,
	  .co_filename = 104, .co_name = 112, .co_qualname = NONE, .co_firstlineno = 40,
	  .co_table = 120, .co_code = NONE },
	{ .minor = 11, OBJECTS_UP_TO_311,
	  .frames = FRAMES_INTERP, .lasti = INSTR_PREV, .table = TABLE_LOCATIONS,
	  .rt_interp_head = 40, .is_next = 0, .is_threads = 16,
	  .ts_next = 8, .ts_thread_id = 152, .ts_native_id = 160, .ts_frame = 56, .cf_frame = 8,
	  .fr_back = 48, .fr_code = 32, .fr_lasti = 56, .fr_entry = 68, .fr_owner = 69,
	  .fr_size = 72,
	  .co_filename = 112, .co_name = 120, .co_qualname = 128, .co_firstlineno = 72,
	  .co_table = 136, .co_code = 184 },
	{ .minor = 12, OBJECTS_FROM_312,
	  .frames = FRAMES_INTERP, .lasti = INSTR_PREV, .table = TABLE_LOCATIONS,
	  .rt_interp_head = 40, .is_next = 0, .is_threads = 72,
	  .ts_next = 8, .ts_thread_id = 136, .ts_native_id = 144, .ts_frame = 56, .cf_frame = 0,
	  .fr_back = 8, .fr_code = 0, .fr_lasti = 56, .fr_entry = NONE, .fr_owner = 70,
	  .fr_size = 72,
	  .co_filename = 112, .co_name = 120, .co_qualname = 128, .co_firstlineno = 68,
	  .co_table = 136, .co_code = 192 },
	{ .minor = 13, OBJECTS_FROM_312,
	  .frames = FRAMES_INTERP, .lasti = INSTR_CUR, .table = TABLE_LOCATIONS,
	  .rt_interp_head = 632, .is_next = 7264, .is_threads = 7344,
	  .ts_next = 8, .ts_thread_id = 152, .ts_native_id = 160, .ts_frame = 72, .cf_frame = NONE,
	  .fr_back = 8, .fr_code = 0, .fr_lasti = 56, .fr_entry = NONE, .fr_owner = 70,
	  .fr_size = 72,
	  .co_filename = 112, .co_name = 120, .co_qualname = 128, .co_firstlineno = 68,
	  .co_table = 136, .co_code = 200 },
};

static const struct tf_pylayout *layout_for(unsigned version)
{
	unsigned major = version >> 24, minor = (version >> 16) & 0xff;

	if (major != 3)
		return NULL;
	for (size_t i = 0; i < TF_ARRAY_SIZE(layouts); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/* ---- the binary ------------------------------------------------------- */

bool tf_pybin_candidate(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strncmp(base, "lib", 3) == 0)
		base += 3;
	return strncmp(base, "python", 6) == 0 &&
	       (base[6] == '\0' || base[6] == '3' || base[6] == '.' || base[6] == '2');
}

void tf_py_version_format(unsigned version, char *buf, size_t n)
{
	unsigned micro = (version >> 8) & 0xff;
	if (micro || (version & 0xff))
		snprintf(buf, n, "%u.%u.%u", version >> 24, (version >> 16) & 0xff, micro);
	else
		snprintf(buf, n, "%u.%u", version >> 24, (version >> 16) & 0xff);
}

/* "python3.10", "libpython3.9.so.1.0", "python3.11d": the version the name
 * says; 0 when it says none. */
static unsigned version_from_name(const char *path, bool *debug)
{
	const char *base = strrchr(path, '/');
	unsigned major, minor;
	int used = 0;

	base = base ? base + 1 : path;
	if (strncmp(base, "lib", 3) == 0)
		base += 3;
	*debug = false;
	if (sscanf(base, "python%u.%u%n", &major, &minor, &used) != 2 || major > 9 || minor > 99)
		return 0;
	/* the ABI flags: d is a debug build (another object layout), t a
	 * free-threaded one; m (pymalloc, up to 3.7) changes nothing here */
	for (const char *f = base + used; *f && *f != '.'; f++)
		if (*f == 'd' || *f == 't')
			*debug = true;
	return major << 24 | minor << 16;
}

/* Read `len` bytes of the file at ELF vaddr `v`. */
static bool read_vaddr(int fd, const tf_pybin *b, uint64_t v, void *buf, size_t len)
{
	for (unsigned i = 0; i < b->nloads; i++) {
		const tf_pybin_load *l = &b->loads[i];
		if (v >= l->vaddr && v + len <= l->vaddr + l->filesz)
			return pread(fd, buf, len, (off_t)(l->offset + (v - l->vaddr))) == (ssize_t)len;
	}
	return false;
}

/* The symbols we need, from .dynsym, then .symtab. */
static void find_symbols(Elf *elf, uint64_t *runtime, uint64_t *pyversion, uint64_t *code_type,
			 uint64_t *initialize)
{
	Elf_Scn *scn = NULL;

	for (int pass = 0; pass < 2; pass++) {
		Elf64_Word want = pass == 0 ? SHT_DYNSYM : SHT_SYMTAB;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			if (!d)
				continue;
			size_t n = sh.sh_size / sh.sh_entsize;
			for (size_t i = 0; i < n; i++) {
				GElf_Sym sym;
				const char *name;
				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
				    !sym.st_value)
					continue;
				name = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (!name || (name[0] != '_' && name[0] != 'P'))
					continue;
				if (!*runtime && strcmp(name, "_PyRuntime") == 0)
					*runtime = sym.st_value;
				else if (!*pyversion && strcmp(name, "Py_Version") == 0)
					*pyversion = sym.st_value;
				else if (!*code_type && strcmp(name, "PyCode_Type") == 0)
					*code_type = sym.st_value;
				else if (!*initialize && strcmp(name, "Py_Initialize") == 0)
					*initialize = sym.st_value;
			}
		}
		if (*runtime && *code_type)
			break;
	}
}

/*
 * 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h): a cookie, the
 * version, then groups of uint64 offsets, each group starting with the
 * struct's size. Indices below count uint64 words after the cookie.
 */
enum {
	DO_VERSION = 0, DO_FREE_THREADED = 1,
	DO_RT = 2,      /* size, finalizing, interpreters_head */
	DO_IS = 5,      /* size, id, next, threads_head, ... (13) */
	DO_TS = 18,     /* size, prev, next, interp, current_frame, thread_id, native_thread_id, ... (9) */
	DO_FR = 27,     /* size, previous, executable, instr_ptr, localsplus, owner */
	DO_CO = 33,     /* size, filename, name, qualname, linetable, firstlineno, argcount,
			   localsplusnames, localspluskinds, co_code_adaptive */
	DO_OB = 43,     /* size, ob_type */
	DO_BYTES = 45 + 4 + 3 + 3 + 3 + 2 + 3, /* after type, tuple, list, dict, float, long */
	DO_STR = DO_BYTES + 3,                 /* size, state, length, asciiobject_size */
	DO_WORDS = DO_STR + 4,
};

static bool layout_from_debug(struct tf_pylayout *l, const uint64_t *w, unsigned minor)
{
	/* every offset must lie within its struct */
	const struct { int group, field; } checks[] = {
		{ DO_RT, 2 }, { DO_IS, 2 }, { DO_IS, 3 }, { DO_TS, 2 }, { DO_TS, 4 }, { DO_TS, 5 },
		{ DO_TS, 6 }, { DO_FR, 1 }, { DO_FR, 2 }, { DO_FR, 3 }, { DO_FR, 5 }, { DO_CO, 1 },
		{ DO_CO, 2 }, { DO_CO, 3 }, { DO_CO, 4 }, { DO_CO, 5 }, { DO_CO, 9 }, { DO_OB, 1 },
		{ DO_BYTES, 1 }, { DO_BYTES, 2 }, { DO_STR, 1 }, { DO_STR, 2 },
	};
	for (size_t i = 0; i < TF_ARRAY_SIZE(checks); i++) {
		uint64_t size = w[checks[i].group], off = w[checks[i].group + checks[i].field];
		if (!size || size > (1u << 20) || off >= size)
			return false;
	}
	if (w[DO_STR + 3] < 24 || w[DO_STR + 3] > 256)
		return false;
	memset(l, 0, sizeof(*l));
	l->minor = minor;
	l->frames = FRAMES_INTERP;
	l->lasti = INSTR_CUR;
	l->table = TABLE_LOCATIONS;
	l->rt_interp_head = (uint32_t)w[DO_RT + 2];
	l->is_next = (uint32_t)w[DO_IS + 2];
	l->is_threads = (uint32_t)w[DO_IS + 3];
	l->ts_next = (uint32_t)w[DO_TS + 2];
	l->ts_frame = (uint32_t)w[DO_TS + 4];
	l->cf_frame = NONE;
	l->ts_thread_id = (uint32_t)w[DO_TS + 5];
	l->ts_native_id = (uint32_t)w[DO_TS + 6];
	l->fr_back = (uint32_t)w[DO_FR + 1];
	l->fr_code = (uint32_t)w[DO_FR + 2];
	l->fr_lasti = (uint32_t)w[DO_FR + 3];
	l->fr_owner = (uint32_t)w[DO_FR + 5];
	l->fr_entry = NONE;
	l->fr_size = (uint32_t)TF_MAX(TF_MAX(l->fr_back, l->fr_code), TF_MAX(l->fr_lasti, l->fr_owner)) + 8;
	l->co_filename = (uint32_t)w[DO_CO + 1];
	l->co_name = (uint32_t)w[DO_CO + 2];
	l->co_qualname = (uint32_t)w[DO_CO + 3];
	l->co_table = (uint32_t)w[DO_CO + 4];
	l->co_firstlineno = (uint32_t)w[DO_CO + 5];
	l->co_code = (uint32_t)w[DO_CO + 9];
	l->ob_type = (uint32_t)w[DO_OB + 1];
	l->bytes_size = (uint32_t)w[DO_BYTES + 1];
	l->bytes_data = (uint32_t)w[DO_BYTES + 2];
	l->str_state = (uint32_t)w[DO_STR + 1];
	l->str_length = (uint32_t)w[DO_STR + 2];
	l->str_ascii = (uint32_t)w[DO_STR + 3];
	/* PyCompactUnicodeObject: utf8_length and utf8 after the ASCII header */
	l->str_compact = l->str_ascii + 16;
	return true;
}

static int probe_fail(tf_pybin *out, tf_pybin_status st, const char *fmt, const char *arg)
{
	out->status = st;
	snprintf(out->why, sizeof(out->why), fmt, arg);
	return 0;
}

int tf_pybin_probe(tf_pybin *out, const char *path)
{
	uint64_t pyversion = 0, initialize = 0;
	bool debug = false;
	unsigned named = version_from_name(path, &debug);
	char vs[32];
	GElf_Ehdr eh;
	size_t nph = 0;
	Elf *elf = NULL;
	int fd, rc = 0;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		out->status = TF_PYBIN_UNREADABLE;
		snprintf(out->why, sizeof(out->why), "cannot be opened (%s)", strerror(errno));
		return tf_error_set_errno(TF_ENOTFOUND, "cannot open '%s'", path);
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    elf_getphdrnum(elf, &nph) != 0) {
		probe_fail(out, TF_PYBIN_UNREADABLE, "%s", "is not an x86-64 ELF file");
		goto done;
	}
	for (size_t i = 0; i < nph && out->nloads < TF_ARRAY_SIZE(out->loads); i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			out->loads[out->nloads++] = (tf_pybin_load){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
	find_symbols(elf, &out->runtime, &pyversion, &out->code_type, &initialize);
	if (!out->runtime && !initialize) {
		/* a python executable linked to libpython has no interpreter of
		 * its own: the library is probed on its own mapping */
		probe_fail(out, TF_PYBIN_NOT_PYTHON, "%s", "holds no interpreter");
		goto done;
	}
	if (named && named < 0x03070000 && !debug) {
		/* before _PyRuntime: another way to the thread states */
		out->version = named;
		tf_py_version_format(named, vs, sizeof(vs));
		probe_fail(out, TF_PYBIN_UNSUPPORTED, "is CPython %s, whose layout testflame does not know",
			   vs);
		goto done;
	}
	if (!out->runtime) {
		out->version = named;
		probe_fail(out, TF_PYBIN_STRIPPED, "%s", "has no _PyRuntime symbol (stripped)");
		goto done;
	}
	{
		/* 3.13+: the debug offsets, with their own version */
		uint64_t w[DO_WORDS];
		char cookie[8];
		if (read_vaddr(fd, out, out->runtime, cookie, 8) && memcmp(cookie, "xdebugpy", 8) == 0 &&
		    read_vaddr(fd, out, out->runtime + 8, w, sizeof(w))) {
			unsigned v = (unsigned)w[DO_VERSION];
			unsigned minor = (v >> 16) & 0xff;
			out->version = v;
			tf_py_version_format(v, vs, sizeof(vs));
			if (w[DO_FREE_THREADED]) {
				probe_fail(out, TF_PYBIN_UNSUPPORTED,
					   "is CPython %s built free-threaded, whose objects testflame cannot read yet",
					   vs);
				goto done;
			}
			if ((v >> 24) != 3 || minor != 13) {
				probe_fail(out, TF_PYBIN_UNSUPPORTED,
					   "is CPython %s, whose debug offsets testflame does not know", vs);
				goto done;
			}
			out->own_layout = tf_xcalloc(1, sizeof(*out->own_layout));
			if (!layout_from_debug(out->own_layout, w, minor)) {
				probe_fail(out, TF_PYBIN_UNSUPPORTED,
					   "is CPython %s with debug offsets that do not hold together", vs);
				goto done;
			}
			out->layout = out->own_layout;
			goto done;
		}
	}
	if (pyversion) {
		uint32_t v = 0;
		if (read_vaddr(fd, out, pyversion, &v, sizeof(v)))
			out->version = v;
	}
	if (!out->version)
		out->version = named;
	if (!out->version) {
		probe_fail(out, TF_PYBIN_UNSUPPORTED, "%s", "is a CPython of unknown version");
		goto done;
	}
	tf_py_version_format(out->version, vs, sizeof(vs));
	if (debug) {
		probe_fail(out, TF_PYBIN_UNSUPPORTED,
			   "is a debug or free-threaded build of CPython %s (another object layout)", vs);
		goto done;
	}
	out->layout = layout_for(out->version);
	if (!out->layout)
		probe_fail(out, TF_PYBIN_UNSUPPORTED, "is CPython %s, whose layout testflame does not know",
			   vs);
done:
	if (out->status != TF_PYBIN_OK)
		out->layout = NULL;
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

void tf_pybin_clear(tf_pybin *b)
{
	if (!b)
		return;
	free(b->own_layout);
	b->own_layout = NULL;
	b->layout = NULL;
}

bool tf_pybin_bias(const tf_pybin *b, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	for (unsigned i = 0; i < b->nloads; i++) {
		const tf_pybin_load *l = &b->loads[i];
		uint64_t seg_page = l->offset & ~(uint64_t)4095;
		if (pgoff >= seg_page && pgoff < l->offset + TF_MAX(l->filesz, 1)) {
			/* the mapping's start holds file offset pgoff, which is
			 * vaddr l->vaddr + (pgoff - l->offset) */
			*bias = start - (l->vaddr - l->offset) - pgoff;
			return true;
		}
	}
	return false;
}

/* ---- line tables ------------------------------------------------------ */

/* Up to 3.9: (bytecode offset delta, line delta) byte pairs; the offset
 * is in bytes and the line delta signed since 3.6. */
static int line_lnotab(const uint8_t *t, size_t len, int line, int lasti)
{
	int addr = 0, target = lasti * 2;
	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > target)
			break;
		line += (int8_t)t[i + 1];
	}
	return line;
}

/* 3.10: (bytes covered, line delta) pairs, the delta -128 meaning the
 * range has no line. */
static int line_linetable(const uint8_t *t, size_t len, int line, int lasti)
{
	int end = 0, target = lasti * 2, cur = -1;
	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t d = (int8_t)t[i + 1];
		end += t[i];
		if (d != -128) {
			line += d;
			cur = line;
		} else {
			cur = -1;
		}
		if (end > target)
			return cur > 0 ? cur : 0;
	}
	return 0;
}

/* 3.11+: entries of a header byte (1, code:4, length-1:3) and varints of
 * 6 bits with 0x40 for "more". */
static bool varint(const uint8_t *t, size_t len, size_t *i, unsigned *out)
{
	unsigned v = 0, shift = 0;
	while (*i < len && shift < 32) {
		uint8_t b = t[(*i)++];
		v |= (unsigned)(b & 63) << shift;
		shift += 6;
		if (!(b & 64)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static int line_locations(const uint8_t *t, size_t len, int line, int lasti)
{
	int addr = 0;
	size_t i = 0;
	while (i < len) {
		uint8_t h = t[i++];
		int code = (h >> 3) & 15, n = (h & 7) + 1, delta = 0, cur;
		unsigned v;
		if (!(h & 128))
			return 0; /* lost the entries' start */
		switch (code) {
		case 15: /* no location */
			cur = -1;
			break;
		case 14: /* long form: line, end line, column, end column */
		case 13: /* no column */
			if (!varint(t, len, &i, &v))
				return 0;
			delta = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
			if (code == 14) {
				for (int k = 0; k < 3; k++)
					if (!varint(t, len, &i, &v))
						return 0;
			}
			line += delta;
			cur = line;
			break;
		case 10:
		case 11:
		case 12: /* one line: the delta is in the code, two column bytes */
			line += code - 10;
			cur = line;
			i += 2;
			break;
		default: /* short form: same line, one column byte */
			cur = line;
			i += 1;
			break;
		}
		if (lasti < addr + n)
			return cur > 0 ? cur : 0;
		addr += n;
	}
	return 0;
}

int tf_py_line(unsigned version, const uint8_t *table, size_t len, int firstlineno, int lasti)
{
	unsigned minor = (version >> 16) & 0xff;

	if (lasti < 0)
		return firstlineno;
	if (!table)
		return 0;
	if (minor >= 11)
		return line_locations(table, len, firstlineno, lasti);
	if (minor == 10)
		return line_linetable(table, len, firstlineno, lasti);
	return line_lnotab(table, len, firstlineno, lasti);
}

/* ---- reading a process ------------------------------------------------ */

#define PAGE 4096
#define CACHE_PAGES 16
#define MAX_INTERPS 16
#define MAX_THREADS 1024
#define MAX_STR 1024
#define MAX_TABLE (1u << 20)

typedef struct {
	uint64_t addr;           /* the code object */
	uint64_t filename, name; /* its string pointers when decoded */
	int firstlineno;
	uint32_t id;
	uint8_t *table;
	uint32_t table_len;
	int memo_lasti, memo_line;
} code_entry;

typedef struct {
	uint32_t tid;
	uint64_t tstate, pthread;
} thread_entry;

typedef struct {
	uint64_t code;
	int32_t lasti;
	bool entry;
} raw_frame;

struct tf_pyproc {
	tf_pyproc_opts o;
	const struct tf_pylayout *l;
	uint64_t runtime, code_type;
	TF_VEC(code_entry) codes;
	tf_htab code_index;
	TF_VEC(thread_entry) threads;
	/* one walk: its frames, then its code objects' headers, read at once */
	TF_VEC(raw_frame) raw;
	TF_VEC(uint64_t) hdr_addr;
	TF_VEC(uint8_t) hdrs;
	size_t hdr_size;
	/* pages read during one walk: frames and code objects cluster */
	uint64_t page_addr[CACHE_PAGES];
	uint32_t page_len[CACHE_PAGES];
	uint8_t (*pages)[PAGE];
	unsigned walk;           /* bumped per walk; pages of older walks are stale */
	unsigned page_walk[CACHE_PAGES];
	tf_buf scratch;
};

/* The bytes of a code object that hold the fields read. */
static size_t code_header_size(const struct tf_pylayout *l)
{
	size_t need = TF_MAX(TF_MAX(l->co_filename, l->co_name), TF_MAX(l->co_table, l->co_firstlineno));
	if (l->co_qualname != NONE)
		need = TF_MAX(need, l->co_qualname);
	return TF_MAX(need, l->ob_type) + 8;
}

static bool code_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_pyproc *p = ctx;
	return p->codes.v[idx].addr == *(const uint64_t *)key;
}

int tf_pyproc_new(tf_pyproc **out, const tf_pyproc_opts *o)
{
	tf_pyproc *p;

	*out = NULL;
	if (!o->bin || o->bin->status != TF_PYBIN_OK || !o->bin->layout)
		return tf_error_set(TF_EUNSUPPORTED, "no interpreter layout to read with");
	p = tf_xcalloc(1, sizeof(*p));
	p->o = *o;
	p->l = o->bin->layout;
	p->runtime = o->bin->runtime + o->bias;
	p->code_type = o->bin->code_type ? o->bin->code_type + o->bias : 0;
	p->pages = tf_xmalloc(CACHE_PAGES * PAGE);
	p->hdr_size = code_header_size(p->l);
	*out = p;
	return 0;
}

tf_pyproc *tf_pyproc_fork(const tf_pyproc *parent, uint32_t pid, void *read_ctx)
{
	tf_pyproc *p = tf_xcalloc(1, sizeof(*p));

	p->o = parent->o;
	p->o.pid = pid;
	p->o.read_ctx = read_ctx;
	p->l = parent->l;
	p->runtime = parent->runtime;
	p->code_type = parent->code_type;
	p->pages = tf_xmalloc(CACHE_PAGES * PAGE);
	p->hdr_size = parent->hdr_size;
	for (size_t i = 0; i < parent->codes.n; i++) {
		code_entry e = parent->codes.v[i];
		if (e.table) {
			uint8_t *t = tf_xmalloc(e.table_len ? e.table_len : 1);
			memcpy(t, e.table, e.table_len);
			e.table = t;
		}
		tf_vec_push(&p->codes, e);
		tf_htab_insert(&p->code_index, tf_hash_u64(e.addr), (uint32_t)p->codes.n - 1);
	}
	return p;
}

void tf_pyproc_free(tf_pyproc *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->codes.n; i++)
		free(p->codes.v[i].table);
	tf_vec_free(&p->codes);
	tf_htab_free(&p->code_index);
	tf_vec_free(&p->threads);
	tf_vec_free(&p->raw);
	tf_vec_free(&p->hdr_addr);
	tf_vec_free(&p->hdrs);
	tf_buf_free(&p->scratch);
	free(p->pages);
	free(p);
}

/* Read through the walk's page cache; false unless all of it was read. */
static bool rd(tf_pyproc *p, uint64_t addr, void *buf, size_t len)
{
	uint64_t page = addr & ~(uint64_t)(PAGE - 1);

	if (!addr || addr + len < addr)
		return false;
	if (addr + len <= page + PAGE) {
		unsigned slot = (unsigned)((page / PAGE) % CACHE_PAGES);
		if (p->page_walk[slot] != p->walk || p->page_addr[slot] != page) {
			p->page_addr[slot] = page;
			p->page_walk[slot] = p->walk;
			p->page_len[slot] = (uint32_t)p->o.read(p->o.read_ctx, page, p->pages[slot], PAGE);
		}
		if (addr + len <= page + p->page_len[slot]) {
			memcpy(buf, p->pages[slot] + (addr - page), len);
			return true;
		}
		return false;
	}
	return p->o.read(p->o.read_ctx, addr, buf, len) == len;
}

static bool rd_ptr(tf_pyproc *p, uint64_t addr, uint64_t *out)
{
	return rd(p, addr, out, 8);
}

/* A str object as UTF-8 into p->scratch (reset first). */
static bool read_str(tf_pyproc *p, uint64_t addr)
{
	const struct tf_pylayout *l = p->l;
	uint8_t hdr[128];
	uint64_t length;
	uint32_t state;
	unsigned kind;
	size_t off, nbytes;
	uint8_t *data;

	tf_buf_clear(&p->scratch);
	if (!rd(p, addr, hdr, l->str_compact) )
		return false;
	memcpy(&length, hdr + l->str_length, 8);
	memcpy(&state, hdr + l->str_state, 4);
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || length > MAX_STR || (kind != 1 && kind != 2 && kind != 4))
		return false;
	off = ((state >> 6) & 1) ? l->str_ascii : l->str_compact;
	nbytes = (size_t)length * kind;
	data = tf_xmalloc(nbytes + 1);
	if (nbytes && !rd(p, addr + off, data, nbytes)) {
		free(data);
		return false;
	}
	for (size_t i = 0; i < length; i++) {
		uint32_t c = kind == 1 ? data[i] : kind == 2 ? (uint32_t)(data[2 * i] | data[2 * i + 1] << 8)
			   : (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 |
			     (uint32_t)data[4 * i + 2] << 16 | (uint32_t)data[4 * i + 3] << 24;
		char u[4];
		size_t n;
		if (c < 0x80) {
			u[0] = (char)c;
			n = 1;
		} else if (c < 0x800) {
			u[0] = (char)(0xc0 | c >> 6);
			u[1] = (char)(0x80 | (c & 63));
			n = 2;
		} else if (c < 0x10000) {
			u[0] = (char)(0xe0 | c >> 12);
			u[1] = (char)(0x80 | ((c >> 6) & 63));
			u[2] = (char)(0x80 | (c & 63));
			n = 3;
		} else if (c < 0x110000) {
			u[0] = (char)(0xf0 | c >> 18);
			u[1] = (char)(0x80 | ((c >> 12) & 63));
			u[2] = (char)(0x80 | ((c >> 6) & 63));
			u[3] = (char)(0x80 | (c & 63));
			n = 4;
		} else {
			free(data);
			return false;
		}
		tf_buf_put(&p->scratch, u, n);
	}
	if (!p->scratch.ptr)
		tf_buf_puts(&p->scratch, "");
	free(data);
	return true;
}

/* The code object at `addr`, decoded (or found again); NULL when it is no
 * code object. */
static code_entry *code_at(tf_pyproc *p, uint64_t addr, const uint8_t *pre)
{
	const struct tf_pylayout *l = p->l;
	uint8_t buf[256];
	const uint8_t *hdr = pre;
	uint64_t type, filename, name, qualname = 0, table;
	int32_t firstlineno;
	uint32_t idx;

	if (!hdr) {
		if (p->hdr_size > sizeof(buf) || !rd(p, addr, buf, p->hdr_size))
			return NULL;
		hdr = buf;
	}
	memcpy(&type, hdr + l->ob_type, 8);
	if (p->code_type && type != p->code_type)
		return NULL;
	memcpy(&filename, hdr + l->co_filename, 8);
	memcpy(&name, hdr + l->co_name, 8);
	memcpy(&firstlineno, hdr + l->co_firstlineno, 4);
	memcpy(&table, hdr + l->co_table, 8);
	if (l->co_qualname != NONE)
		memcpy(&qualname, hdr + l->co_qualname, 8);

	idx = tf_htab_find(&p->code_index, tf_hash_u64(addr), code_eq, p, &addr);
	if (idx != TF_HTAB_NONE) {
		code_entry *e = &p->codes.v[idx];
		if (e->filename == filename && e->name == name && e->firstlineno == firstlineno)
			return e;
	}

	/* new here (or its memory now holds another code object) */
	tf_buf sname = TF_BUF_INIT;
	tf_pycode pc;
	uint64_t tlen = 0;
	code_entry ne = { addr, filename, name, firstlineno, 0, NULL, 0, -2, 0 };

	if (!read_str(p, qualname ? qualname : name))
		return NULL;
	tf_buf_puts(&sname, p->scratch.ptr);
	if (!read_str(p, filename)) {
		tf_buf_free(&sname);
		return NULL;
	}
	if (table && rd(p, table + l->bytes_size, &tlen, 8) && tlen && tlen <= MAX_TABLE) {
		ne.table = tf_xmalloc((size_t)tlen);
		if (rd(p, table + l->bytes_data, ne.table, (size_t)tlen)) {
			ne.table_len = (uint32_t)tlen;
		} else {
			free(ne.table);
			ne.table = NULL;
		}
	}
	ne.id = (*p->o.next_code_id)++;
	pc.id = ne.id;
	pc.name = sname.ptr;
	pc.file = p->scratch.ptr;
	pc.firstlineno = firstlineno;
	pc.qualified = qualname != 0;
	if (p->o.on_code)
		p->o.on_code(p->o.code_ctx, &pc);
	tf_buf_free(&sname);
	if (idx != TF_HTAB_NONE) {
		free(p->codes.v[idx].table);
		p->codes.v[idx] = ne;
		return &p->codes.v[idx];
	}
	tf_vec_push(&p->codes, ne);
	tf_htab_insert(&p->code_index, tf_hash_u64(addr), (uint32_t)p->codes.n - 1);
	return &p->codes.v[p->codes.n - 1];
}

static int code_line(tf_pyproc *p, code_entry *e, int lasti)
{
	if (e->memo_lasti != lasti) {
		e->memo_lasti = lasti;
		e->memo_line = tf_py_line(p->o.bin->version, e->table, e->table_len, e->firstlineno,
					  lasti);
	}
	return e->memo_line;
}

/*
 * glibc keeps a thread's kernel tid in its struct pthread, whose address
 * is the pthread_t CPython records before 3.11. Where in the struct, is
 * measured once on testflame's own threads (the same glibc as the
 * profiled programs'): the first offset holding the tid, in two threads.
 * A process-wide constant, measured lazily by the (single) reader thread.
 */
static int pthread_tid_offset; /* 0 not measured yet, -1 not found */

static int find_tid_offset(pthread_t self, pid_t tid)
{
	const unsigned char *base = (const unsigned char *)self;
	for (int off = 0; off < 2048; off += 4) {
		pid_t v;
		memcpy(&v, base + off, sizeof(v));
		if (v == tid)
			return off;
	}
	return -1;
}

static void *tid_probe_thread(void *arg)
{
	*(int *)arg = find_tid_offset(pthread_self(), (pid_t)syscall(SYS_gettid));
	return NULL;
}

static int tid_offset(void)
{
	if (!pthread_tid_offset) {
		int mine = find_tid_offset(pthread_self(), (pid_t)syscall(SYS_gettid)), other = -1;
		pthread_t th;
		if (pthread_create(&th, NULL, tid_probe_thread, &other) == 0)
			pthread_join(th, NULL);
		pthread_tid_offset = mine > 0 && mine == other ? mine : -1;
	}
	return pthread_tid_offset;
}

/* Is thread state `ts` the one of thread `tid`? */
static bool tstate_is(tf_pyproc *p, uint64_t ts, uint32_t tid, uint64_t *pthread_out)
{
	const struct tf_pylayout *l = p->l;
	if (l->ts_native_id != NONE) {
		uint64_t native = 0;
		return rd(p, ts + l->ts_native_id, &native, 8) && native == tid;
	}
	uint64_t pt = 0;
	uint32_t got = 0;
	int off = tid_offset();
	if (off < 0 || !rd_ptr(p, ts + l->ts_thread_id, &pt) || !pt)
		return false;
	if (!rd(p, pt + (uint64_t)off, &got, 4))
		return false;
	*pthread_out = pt;
	return got == tid;
}

/* The thread state of `tid`: remembered, checked, else searched. */
static uint64_t find_tstate(tf_pyproc *p, uint32_t tid)
{
	const struct tf_pylayout *l = p->l;
	uint64_t interp = 0, pt = 0, only = 0;
	unsigned nstates = 0;

	for (size_t i = 0; i < p->threads.n; i++) {
		thread_entry *t = &p->threads.v[i];
		if (t->tid != tid)
			continue;
		if (l->ts_native_id == NONE) {
			uint64_t cur = 0;
			if (rd_ptr(p, t->tstate + l->ts_thread_id, &cur) && cur == t->pthread) {
				return t->tstate;
			}
		} else if (tstate_is(p, t->tstate, tid, &pt)) {
			return t->tstate;
		}
		p->threads.v[i] = p->threads.v[--p->threads.n];
		break;
	}
	if (!rd_ptr(p, p->runtime + l->rt_interp_head, &interp))
		return 0;
	for (unsigned ni = 0; interp && ni < MAX_INTERPS; ni++) {
		uint64_t ts = 0, next = 0;
		if (!rd_ptr(p, interp + l->is_threads, &ts))
			return 0;
		for (unsigned nt = 0; ts && nt < MAX_THREADS; nt++, nstates++) {
			pt = 0;
			if (tstate_is(p, ts, tid, &pt)) {
				thread_entry te = { tid, ts, pt };
				tf_vec_push(&p->threads, te);
				return ts;
			}
			only = ts;
			if (!rd_ptr(p, ts + l->ts_next, &ts))
				return 0;
		}
		if (!rd_ptr(p, interp + l->is_next, &next))
			return 0;
		interp = next;
	}
	/* without glibc's layout, a process with one Python thread: its main
	 * thread's */
	if (l->ts_native_id == NONE && tid_offset() < 0 && nstates == 1 && tid == p->o.pid)
		return only;
	return 0;
}

/* Phase two of a walk: the code objects' headers, all read at once. */
static void prefetch_codes(tf_pyproc *p)
{
	size_t want = p->hdr_size, n = 0;

	p->hdrs.n = 0;
	for (size_t i = 0; i < p->raw.n; i++) {
		uint64_t a = p->raw.v[i].code;
		bool seen = false;
		for (size_t j = 0; j < p->hdr_addr.n && !seen; j++)
			seen = p->hdr_addr.v[j] == a;
		if (!seen)
			tf_vec_push(&p->hdr_addr, a);
	}
	if (!p->o.readv)
		return;
	tf_vec_reserve(&p->hdrs, p->hdr_addr.n * want);
	while (n < p->hdr_addr.n) {
		size_t batch = TF_MIN(p->hdr_addr.n - n, (size_t)64);
		size_t got = p->o.readv(p->o.read_ctx, p->hdr_addr.v + n, p->hdrs.v + n * want, want,
					batch);
		n += got;
		if (got < batch)
			break; /* the rest is read one by one */
	}
	p->hdrs.n = n * want;
}

int tf_pyproc_stack(tf_pyproc *p, uint32_t tid, tf_pyframe *out, size_t max, size_t *n, bool *cut)
{
	const struct tf_pylayout *l = p->l;
	uint64_t ts, frame = 0;
	uint8_t fr[128];
	size_t k = 0;
	int rc = 0;

	*n = 0;
	if (cut)
		*cut = false;
	p->walk++;
	p->raw.n = 0;
	p->hdr_addr.n = 0;
	ts = find_tstate(p, tid);
	if (!ts)
		return TF_ENOTFOUND;
	if (!rd_ptr(p, ts + l->ts_frame, &frame))
		return TF_EINVAL;
	if (l->cf_frame != NONE && frame && !rd_ptr(p, frame + l->cf_frame, &frame))
		return TF_EINVAL;
	/* phase one: the frames, innermost first */
	for (unsigned steps = 0; frame; steps++) {
		raw_frame rf = { 0, -1, false };
		uint64_t back, instr = 0;

		if (p->raw.n == max || steps > 4 * max) {
			if (cut)
				*cut = true;
			break;
		}
		if (l->fr_size > sizeof(fr) || !rd(p, frame, fr, l->fr_size)) {
			rc = TF_EINVAL;
			break;
		}
		memcpy(&back, fr + l->fr_back, 8);
		memcpy(&rf.code, fr + l->fr_code, 8);
		if (l->fr_owner != NONE && l->frames == FRAMES_INTERP && l->fr_entry == NONE &&
		    fr[l->fr_owner] == FRAME_OWNED_BY_CSTACK) {
			/* 3.12+: the shim a C-level call of the evaluation loop
			 * pushes below its first frame */
			if (p->raw.n)
				p->raw.v[p->raw.n - 1].entry = true;
			frame = back;
			continue;
		}
		if (l->frames == FRAMES_OBJECT) {
			/* the last instruction started: in bytes up to 3.9 */
			memcpy(&rf.lasti, fr + l->fr_lasti, 4);
			if (l->lasti == LASTI_BYTES && rf.lasti > 0)
				rf.lasti /= 2;
		} else {
			memcpy(&instr, fr + l->fr_lasti, 8);
			int64_t units = ((int64_t)instr - (int64_t)(rf.code + l->co_code)) / 2;
			rf.lasti = units < -1 || units > (1 << 26) ? -1 : (int32_t)units;
		}
		rf.entry = l->frames == FRAMES_OBJECT || (l->fr_entry != NONE && fr[l->fr_entry] != 0);
		tf_vec_push(&p->raw, rf);
		if (back == frame)
			break;
		frame = back;
	}
	/* phase two: their code objects */
	prefetch_codes(p);
	for (size_t i = 0; i < p->raw.n; i++) {
		const raw_frame *rf = &p->raw.v[i];
		const uint8_t *hdr = NULL;
		for (size_t j = 0; j * p->hdr_size < p->hdrs.n; j++)
			if (p->hdr_addr.v[j] == rf->code) {
				hdr = p->hdrs.v + j * p->hdr_size;
				break;
			}
		code_entry *e = code_at(p, rf->code, hdr);
		if (!e) {
			rc = TF_EINVAL;
			break;
		}
		out[k].code = e->id;
		out[k].line = code_line(p, e, rf->lasti);
		out[k].entry = rf->entry;
		k++;
	}
	/* the outermost frame always ends a C-level call */
	if (k)
		out[k - 1].entry = true;
	*n = k;
	return rc;
}

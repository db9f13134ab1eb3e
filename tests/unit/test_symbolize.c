/*
 * test_symbolize.c - the symbolizer against real processes: fixture
 * programs (PIE, non-PIE, C++, -O2 with inlined functions) are started,
 * their /proc/PID/maps fed as the MMAP events perf records, and addresses
 * the programs report about themselves must come back with the right
 * function, file and line. Also: fork/exec/exit semantics, deleted and
 * memfd binaries pinned while the process lives, [vdso], the kernel, JIT
 * perf maps (and node's), separate debug info, and bad input.
 */
#include "symbolize_helpers.h"
#include "symbolize/symbolize_int.h"

#include <dirent.h>

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <elf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

static tf_symbolizer *new_sym(void)
{
	tf_symbolizer *s;
	tf_symbolizer_opts o;
	tf_symbolizer_opts_init(&o);
	assert_int_equal(tf_symbolizer_new(&s, &o), 0);
	return s;
}

static const tf_symloc *look(tf_symbolizer *s, pid_t pid, uint64_t addr)
{
	const tf_symloc *l = tf_symbolizer_lookup(s, (uint32_t)pid, 0, addr, false);
	assert_non_null(l);
	assert_non_null(l->frames);
	assert_true(l->nframes >= 1);
	assert_non_null(l->frames[0].function);
	return l;
}

static void check_hot_loop(const char *name, bool pie)
{
	char *path = fixture_path(name);
	fixture f;
	int decl, call;
	tf_symbolizer *s = new_sym();

	fixture_start(&f, path, NULL);
	uint64_t fn = fixture_addr(&f, "fn sym_hot_loop", &decl);
	uint64_t ra = fixture_addr(&f, "ra sym_hot_loop", &call);
	uint64_t mainp = fixture_addr(&f, "fn main", NULL);
	assert_true(feed_maps(s, f.pid, false, true) > 0);

	const tf_symloc *l = look(s, f.pid, fn);
	assert_true(l->resolved);
	assert_int_equal(l->nframes, 1);
	assert_string_equal(l->frames[0].function, "sym_hot_loop");
	assert_string_equal(l->frames[0].system_name, "sym_hot_loop");
	assert_true(ends_with(l->frames[0].file, "tests/fixtures/symbolize.c"));
	assert_int_equal(l->frames[0].start_line, decl);
	assert_true(l->frames[0].line >= decl && l->frames[0].line <= decl + 1);
	assert_true(ends_with(l->module, name));
	assert_non_null(l->build_id);
	assert_true(l->module_addr >= l->module_start && l->module_addr < l->module_end);
	if (!pie)
		assert_true(l->module_addr == fn); /* ET_EXEC: vaddr = address */
	else
		assert_true(l->module_addr != fn && l->module_addr < 0x100000);

	const tf_symloc *r = look(s, f.pid, ra - 1);
	assert_string_equal(r->frames[0].function, "sym_hot_loop");
	assert_int_equal(r->frames[0].line, call);
	assert_int_not_equal(r->id, l->id);
	assert_ptr_equal(look(s, f.pid, fn), l); /* cached: same symloc */

	const tf_symloc *m = look(s, f.pid, mainp);
	assert_string_equal(m->frames[0].function, "main");

	tf_symbolizer_stats st;
	tf_symbolizer_stats_get(s, &st);
	assert_int_equal(st.lookups, 4);
	assert_int_equal(st.unresolved, 0);
	assert_int_equal(st.symlocs, 3);
	assert_true(st.modules >= 1);
	assert_int_equal(st.missing_files, 0);

	fixture_stop(&f);
	tf_symbolizer_free(s);
	free(path);
}

static void test_pie(void **state)
{
	(void)state;
	check_hot_loop("symbolize", true);
}

static void test_nopie(void **state)
{
	(void)state;
	check_hot_loop("symbolize_nopie", false);
}

static void test_inlined_frames(void **state)
{
	(void)state;
	char *path = fixture_path("symbolize_nofp");
	fixture f;
	unsigned long long ra;
	int lb, la, lo, db, da, dout;

	fixture_start(&f, path, NULL);
	assert_int_equal(sscanf(fixture_get(&f, "inline"), "%llx %d %d %d %d %d %d", &ra, &lb, &la,
				&lo, &db, &da, &dout), 7);
	tf_symbolizer *s = new_sym();
	feed_maps(s, f.pid, false, true);
	const tf_symloc *l = look(s, f.pid, ra - 1);
	assert_true(l->resolved);
	assert_int_equal(l->nframes, 3);
	assert_string_equal(l->frames[0].function, "inner_b");
	assert_int_equal(l->frames[0].line, lb);
	assert_int_equal(l->frames[0].start_line, db);
	assert_string_equal(l->frames[1].function, "inner_a");
	assert_int_equal(l->frames[1].line, la);
	assert_int_equal(l->frames[1].start_line, da);
	assert_string_equal(l->frames[2].function, "sym_outer");
	assert_int_equal(l->frames[2].line, lo);
	assert_int_equal(l->frames[2].start_line, dout);
	for (int i = 0; i < 3; i++)
		assert_true(ends_with(l->frames[i].file, "tests/fixtures/symbolize_nofp.c"));
	tf_symbolizer_free(s);

	/* without inlined frames: the function, at the line of its own code */
	tf_symbolizer_opts o;
	tf_symbolizer_opts_init(&o);
	o.inline_frames = false;
	assert_int_equal(tf_symbolizer_new(&s, &o), 0);
	feed_maps(s, f.pid, false, true);
	l = look(s, f.pid, ra - 1);
	assert_int_equal(l->nframes, 1);
	assert_string_equal(l->frames[0].function, "sym_outer");
	assert_int_equal(l->frames[0].line, lo);
	tf_symbolizer_free(s);
	fixture_stop(&f);
	free(path);
}

/* The line tables as lines.c reads them answer as libdw's do, at every
 * row's address and the bytes around it, in every CU of a binary: the C
 * and C++ fixtures (a sequence per template instance) and this test
 * itself (the symbolizer's own CUs, sequences long enough to be decoded
 * from checkpoints). */
static void check_lines_as_libdw(tf_symbolizer *s, const char *path)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Dwarf *dbg = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dbg);
	Dwarf_Off off = 0, next;
	size_t hsize, cus = 0, checked = 0, cks = 0, seqs = 0;
	while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;
		tf_sym_lines l;
		bool ok = dwarf_offdie(dbg, off + hsize, &cu) != NULL;
		off = next;
		if (!ok || dwarf_getsrclines(&cu, &lines, &n) != 0)
			continue;
		memset(&l, 0, sizeof(l));
		assert_true(tf_sym_lines_read(&l, &cu));
		assert_true(l.lazy);
		cus++;
		cks += l.cks.n;
		seqs += l.seqs.n;
		for (size_t i = 0; i < n; i++) {
			Dwarf_Addr a;
			assert_int_equal(dwarf_lineaddr(dwarf_onesrcline(lines, i), &a), 0);
			for (uint64_t pc = a ? a - 1 : 0; pc <= a + 1; pc++) {
				Dwarf_Line *want = dwarf_getsrc_die(&cu, pc);
				const tf_sym_row *got = tf_sym_lines_find(&l, pc);
				checked++;
				if (!want) {
					assert_null(got);
					continue;
				}
				assert_non_null(got);
				int wl = 0;
				Dwarf_Addr wa = 0;
				dwarf_lineno(want, &wl);
				dwarf_lineaddr(want, &wa);
				assert_int_equal(got->line, (uint32_t)wl);
				assert_int_equal(got->addr, wa);
				assert_string_equal(tf_sym_lines_file(s, &l, got->file),
						    dwarf_linesrc(want, NULL, NULL));
			}
		}
		tf_sym_lines_free(&l);
	}
	assert_true(cus >= 1);
	assert_true(checked >= 30);
	dwarf_end(dbg);
	close(fd);
	if (cus > 10)
		assert_true(cks > seqs); /* sequences decoded from checkpoints */
}

static void test_line_tables(void **state)
{
	(void)state;
	tf_symbolizer *s = new_sym();
	const char *names[] = { "symbolize_nofp", "symbolize_cxx", "symbolize" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = fixture_path(names[i]);
		check_lines_as_libdw(s, path);
		free(path);
	}
	check_lines_as_libdw(s, "/proc/self/exe");
	tf_symbolizer_free(s);
}

/* The inlined calls and blocks under `scope` through libdw, as
 * resolve.c's keep_nodes meets them, up to `cap`. */
static size_t libdw_nodes(Dwarf_Die *scope, size_t n, size_t cap)
{
	Dwarf_Die child;
	if (dwarf_child(scope, &child) != 0)
		return n;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		if (++n >= cap || (n = libdw_nodes(&child, n, cap)) >= cap)
			return cap;
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

/* A CU's function index read directly (funcs.c) is the one libdw's walk
 * gives, for every CU of a binary, with and without the functions in
 * functions and classes: the C and C++ fixtures (lambdas, templates, a
 * test framework's classes) and this test itself. */
static size_t check_functions_as_libdw(const char *path)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Dwarf *dbg = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dbg);
	Dwarf_Off off = 0, next;
	size_t hsize, cus = 0, funcs = 0, nodes = 0;
	while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cudie;
		bool ok = dwarf_offdie(dbg, off + hsize, &cudie) != NULL;
		off = next;
		if (!ok)
			continue;
		for (int all = 0; all < 2; all++) {
			tf_sym_cu a, b;
			memset(&a, 0, sizeof(a));
			memset(&b, 0, sizeof(b));
			assert_true(tf_sym_cu_functions(&cudie, &a, all));
			tf_sym_cu_functions_libdw(&cudie, &b, all);
			assert_int_equal(a.offs.n, b.offs.n);
			assert_int_equal(a.funcs.v.n, b.funcs.v.n);
			if (a.offs.n)
				assert_memory_equal(a.offs.v, b.offs.v, a.offs.n * sizeof(uint64_t));
			if (a.funcs.v.n)
				assert_memory_equal(a.funcs.v.v, b.funcs.v.v,
						    a.funcs.v.n * sizeof(tf_sym_ivl));
			funcs += a.offs.n;
			/* and each function's tree of inlined calls counts alike,
			 * whole and cut at a cap */
			for (size_t k = 0; all && k < a.offs.n; k++) {
				Dwarf_Die fn;
				assert_non_null(dwarf_offdie(dbg, a.offs.v[k], &fn));
				assert_int_equal(tf_sym_die_nodes(&cudie, &fn, SIZE_MAX),
						 libdw_nodes(&fn, 0, SIZE_MAX));
				assert_int_equal(tf_sym_die_nodes(&cudie, &fn, 3), libdw_nodes(&fn, 0, 3));
				nodes += tf_sym_die_nodes(&cudie, &fn, SIZE_MAX);
			}
			tf_sym_ivls_free(&a.funcs);
			tf_sym_ivls_free(&b.funcs);
			tf_vec_free(&a.offs);
			tf_vec_free(&b.offs);
		}
		cus++;
	}
	assert_true(cus >= 1);
	assert_true(funcs >= 2);
	dwarf_end(dbg);
	close(fd);
	return nodes;
}

static void test_function_index(void **state)
{
	(void)state;
	const char *names[] = { "symbolize_nofp", "symbolize_cxx", "symbolize",
				"cxxforms/catch2_tests", "cxxforms/doctest_tests" };
	size_t nodes = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = fixture_path(names[i]);
		nodes += check_functions_as_libdw(path);
		free(path);
	}
	nodes += check_functions_as_libdw("/proc/self/exe");
	assert_true(nodes >= 10); /* inlined calls were counted */
}

/* The module of the binary at `path`, loaded by a new symbolizer. */
static tf_sym_module *module_of(tf_symbolizer **s, const char *dir, const char *path)
{
	tf_symbolizer_opts o;
	tf_rec_event ev;
	bool deleted;

	tf_symbolizer_opts_init(&o);
	o.persist_dir = dir; /* NULL: none */
	assert_int_equal(tf_symbolizer_new(s, &o), 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = TF_REC_MMAP;
	ev.pid = ev.tid = 4242;
	ev.mmap.start = 0x400000;
	ev.mmap.len = 0x1000;
	ev.mmap.prot = PROT_READ | PROT_EXEC;
	ev.mmap.filename = path;
	uint32_t file = tf_sym_file_for_event(*s, &ev, &deleted);
	assert_int_not_equal(file, UINT32_MAX);
	assert_true(tf_sym_file_module(*s, file));
	return (*s)->mods.v[(*s)->files.v[file].module];
}

/* The function symbols read in place from .symtab are the ones libdwfl
 * answers symbol by symbol: same ranges, same names, same winner among
 * aliases, for a C program, a C++ one (templates, weak symbols), this test
 * binary, the system's Python and two stripped libraries (.dynsym). */
static void check_symtab_in_place(const char *path)
{
	tf_symbolizer *s;
	TF_VEC(tf_sym_ivl) fast = { 0 };
	TF_VEC(const char *) fast_names = { 0 };
	tf_sym_module *m = module_of(&s, NULL, path);

	tf_sym_module_symbols_reload(m, false);
	for (size_t i = 0; i < m->syms.v.n; i++) {
		tf_vec_push(&fast, m->syms.v.v[i]);
		tf_vec_push(&fast_names, m->symstr ? m->symstr + m->syms.v.v[i].val
						  : m->symnames.v[m->syms.v.v[i].val]);
	}
	tf_sym_module_symbols_reload(m, true);
	assert_int_equal(m->syms.v.n, fast.n);
	assert_true(fast.n > 3);
	for (size_t i = 0; i < fast.n; i++) {
		const tf_sym_ivl *a = &fast.v[i], *b = &m->syms.v.v[i];
		assert_true(a->lo == b->lo && a->hi == b->hi && a->rank == b->rank);
		assert_string_equal(fast_names.v[i], m->symnames.v[b->val]);
		/* and a lookup inside answers alike */
		const char *name = tf_sym_module_symbol(m, a->lo);
		assert_non_null(name);
	}
	tf_vec_free(&fast);
	tf_vec_free(&fast_names);
	tf_symbolizer_free(s);
}

/* The sorted symbol index kept by build-id: written by the first run,
 * mapped by the next (same answers), built again when damaged. */
static void test_kept_symbol_index(void **state)
{
	(void)state;
	char *path = fixture_path("symbolize_cxx"), *dir = unit_tmpdir();
	tf_symbolizer *s1, *s2;
	struct stat st;

	tf_sym_module *m1 = module_of(&s1, dir, path);
	tf_sym_module_symbols(m1);
	assert_null(m1->syms_map); /* built, and kept */
	assert_non_null(m1->syms_path);
	assert_int_equal(stat(m1->syms_path, &st), 0);
	off_t size = st.st_size;
	for (int damaged = 0; damaged < 2; damaged++) {
		tf_sym_module *m2 = module_of(&s2, dir, path);
		tf_sym_module_symbols(m2);
		if (damaged)
			assert_null(m2->syms_map);
		else
			assert_non_null(m2->syms_map);
		assert_int_equal(m2->syms.v.n, m1->syms.v.n);
		for (size_t i = 0; i < m1->syms.v.n; i++) {
			uint64_t a = m1->syms.v.v[i].lo;
			assert_string_equal(tf_sym_module_symbol(m1, a), tf_sym_module_symbol(m2, a));
		}
		tf_symbolizer_free(s2);
		/* cut short: not used, and written whole again */
		assert_int_equal(truncate(m1->syms_path, size - 8), 0);
	}
	assert_int_equal(stat(m1->syms_path, &st), 0);
	assert_int_equal(st.st_size, size - 8); /* the damaged run rebuilt it, then cut again */
	tf_symbolizer_free(s1);
	unit_rmtree(dir);
	free(path);
}

static void test_symtab_in_place(void **state)
{
	(void)state;
	char *c = fixture_path("symbolize"), *cxx = fixture_path("symbolize_cxx");
	check_symtab_in_place(c);
	check_symtab_in_place(cxx);
	check_symtab_in_place("/proc/self/exe");
	/* stripped libraries: their .dynsym, as libdwfl reads it */
	static const char *const more[] = { "/usr/bin/python3",
					    "/usr/lib/x86_64-linux-gnu/libc.so.6",
					    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(more); i++)
		if (access(more[i], R_OK) == 0)
			check_symtab_in_place(more[i]);
	free(c);
	free(cxx);
}

/* The answers kept by build-id: a second symbolizer with the same user
 * cache answers from them (no DWARF), with the same frames; a damaged
 * file is ignored; other options keep their own file. */
static const tf_symloc *kept_lookup(const char *dir, const fixture *f, uint64_t addr,
				    bool inline_frames, tf_symbolizer_stats *st, tf_symbolizer **out)
{
	tf_symbolizer_opts o;
	tf_symbolizer_opts_init(&o);
	o.persist_dir = dir;
	o.inline_frames = inline_frames;
	assert_int_equal(tf_symbolizer_new(out, &o), 0);
	feed_maps(*out, f->pid, false, true);
	const tf_symloc *l = look(*out, f->pid, addr);
	tf_symbolizer_save(*out);
	tf_symbolizer_stats_get(*out, st);
	return l;
}

/* The kept file grows by segments: a run that adds answers appends one
 * (the file is not written again: same inode), the next run reads them
 * all; a torn last segment is ignored and the file written whole again,
 * and so is a file of 16 segments. */
static ino_t kept_inode(const char *dir, off_t *size)
{
	char *cmd = tf_xasprintf("%s/sym", dir);
	DIR *d = opendir(cmd);
	struct dirent *e;
	struct stat st = { 0 };
	assert_non_null(d);
	while ((e = readdir(d)))
		if (strstr(e->d_name, "-di") && !strchr(e->d_name, '.')) {
			char *p = tf_xasprintf("%s/%s", cmd, e->d_name);
			assert_int_equal(stat(p, &st), 0);
			free(p);
			break;
		}
	closedir(d);
	free(cmd);
	*size = st.st_size;
	return st.st_ino;
}

static void test_kept_segments(void **state)
{
	(void)state;
	char *path = fixture_path("symbolize_nofp"), *dir = unit_tmpdir();
	fixture f;
	unsigned long long ra, mainp;
	int lb, la, lo, db, da, dout;
	tf_symbolizer *s1;
	tf_symbolizer_stats st;
	off_t size0, size1, size2;

	fixture_start(&f, path, NULL);
	assert_int_equal(sscanf(fixture_get(&f, "inline"), "%llx %d %d %d %d %d %d", &ra, &lb, &la,
				&lo, &db, &da, &dout), 7);
	mainp = fixture_addr(&f, "fn uw_level3", NULL);
	kept_lookup(dir, &f, ra - 1, true, &st, &s1);
	tf_symbolizer_free(s1);
	ino_t ino = kept_inode(dir, &size0);
	/* a new address: appended */
	const tf_symloc *m = kept_lookup(dir, &f, mainp, true, &st, &s1);
	assert_string_equal(m->frames[0].function, "uw_level3");
	assert_int_equal(st.symcache_saved, 1);
	tf_symbolizer_free(s1);
	assert_true(kept_inode(dir, &size1) == ino);
	assert_true(size1 > size0);
	/* both answered from the two segments */
	kept_lookup(dir, &f, ra - 1, true, &st, &s1);
	m = look(s1, f.pid, mainp);
	assert_string_equal(m->frames[0].function, "uw_level3");
	tf_symbolizer_stats_get(s1, &st);
	assert_int_equal(st.symcache_hits, 2);
	tf_symbolizer_free(s1);

	/* torn: the last segment cut short is not read, the first is */
	char *cut = tf_xasprintf("cd %s/sym && for f in *-di; do truncate -s -5 \"$f\"; done", dir);
	assert_int_equal(system(cut), 0);
	kept_lookup(dir, &f, ra - 1, true, &st, &s1);
	assert_int_equal(st.symcache_hits, 1);
	m = look(s1, f.pid, mainp);
	assert_string_equal(m->frames[0].function, "uw_level3");
	tf_symbolizer_save(s1);
	tf_symbolizer_free(s1);
	assert_true(kept_inode(dir, &size2) != ino); /* written whole */
	ino = kept_inode(dir, &size2);
	kept_lookup(dir, &f, mainp, true, &st, &s1);
	assert_int_equal(st.symcache_hits, 1);
	assert_int_equal(st.symcache_saved, 0);
	tf_symbolizer_free(s1);

	/* sixteen segments (the file written whole, then fifteen runs that
	 * added to it), then one file again: runs that each resolve new
	 * addresses, spread over the binary's other functions */
	int saves = 0, rewritten = 0;
	for (int k = 0; k < 200 && !rewritten; k++) {
		kept_lookup(dir, &f, ra - 8192 + 97 * (uint64_t)k, true, &st, &s1);
		tf_symbolizer_free(s1);
		if (!st.symcache_saved)
			continue;
		saves++;
		ino_t now = kept_inode(dir, &size2);
		if (now != ino)
			rewritten = saves;
		ino = now;
	}
	assert_int_equal(rewritten, 16);
	free(cut);
	fixture_stop(&f);
	unit_rmtree(dir);
	free(path);
}

static void test_kept_answers(void **state)
{
	(void)state;
	char *path = fixture_path("symbolize_nofp"), *dir = unit_tmpdir();
	fixture f;
	unsigned long long ra;
	int lb, la, lo, db, da, dout;
	tf_symbolizer *s1, *s2;
	tf_symbolizer_stats st;

	fixture_start(&f, path, NULL);
	assert_int_equal(sscanf(fixture_get(&f, "inline"), "%llx %d %d %d %d %d %d", &ra, &lb, &la,
				&lo, &db, &da, &dout), 7);
	const tf_symloc *a = kept_lookup(dir, &f, ra - 1, true, &st, &s1);
	assert_int_equal(st.symcache_hits, 0);
	assert_true(st.symcache_saved >= 1);
	const tf_symloc *b = kept_lookup(dir, &f, ra - 1, true, &st, &s2);
	assert_int_equal(st.symcache_hits, 1);
	assert_true(st.symcache_loaded >= 1);
	assert_int_equal(st.symcache_saved, 0); /* nothing new */
	assert_int_equal(b->nframes, 3);
	assert_int_equal(a->nframes, b->nframes);
	for (uint32_t i = 0; i < a->nframes; i++) {
		assert_string_equal(a->frames[i].function, b->frames[i].function);
		assert_string_equal(a->frames[i].system_name, b->frames[i].system_name);
		assert_string_equal(a->frames[i].file, b->frames[i].file);
		assert_int_equal(a->frames[i].line, b->frames[i].line);
		assert_int_equal(a->frames[i].start_line, b->frames[i].start_line);
	}
	assert_int_equal(b->frames[0].line, lb);
	assert_int_equal(b->frames[2].line, lo);
	assert_string_equal(b->build_id, a->build_id);
	tf_symbolizer_free(s1);
	tf_symbolizer_free(s2);

	/* a damaged file: not used, written again */
	char *kept = tf_xasprintf("%s/sym/%s-di", dir, "*");
	char *cmd = tf_xasprintf("for f in %s; do head -c 40 \"$f\" > \"$f.x\" && mv \"$f.x\" \"$f\"; done", kept);
	assert_int_equal(system(cmd), 0);
	b = kept_lookup(dir, &f, ra - 1, true, &st, &s2);
	assert_int_equal(st.symcache_hits, 0);
	assert_int_equal(b->nframes, 3);
	assert_int_equal(b->frames[0].line, lb);
	assert_true(st.symcache_saved >= 1);
	tf_symbolizer_free(s2);

	/* without inlined frames: its own file, its own answer */
	b = kept_lookup(dir, &f, ra - 1, false, &st, &s2);
	assert_int_equal(st.symcache_hits, 0);
	assert_int_equal(b->nframes, 1);
	assert_string_equal(b->frames[0].function, "sym_outer");
	assert_int_equal(b->frames[0].line, lo);
	tf_symbolizer_free(s2);

	/* the function kept whole: other addresses of sym_outer, never
	 * looked up before, answered from it as the DWARF answers them */
	tf_symbolizer *s0 = new_sym();
	feed_maps(s0, f.pid, false, true);
	kept_lookup(dir, &f, ra - 1, true, &st, &s2);
	size_t same = 0;
	for (uint64_t pc = ra - 64; pc < ra + 64; pc++) {
		const tf_symloc *want = look(s0, f.pid, pc);
		if (strcmp(want->frames[want->nframes - 1].function, "sym_outer") != 0)
			continue;
		const tf_symloc *got = look(s2, f.pid, pc);
		assert_int_equal(got->nframes, want->nframes);
		for (uint32_t i = 0; i < want->nframes; i++) {
			assert_string_equal(got->frames[i].function, want->frames[i].function);
			assert_string_equal(got->frames[i].system_name, want->frames[i].system_name);
			assert_string_equal(got->frames[i].file, want->frames[i].file);
			assert_int_equal(got->frames[i].line, want->frames[i].line);
			assert_int_equal(got->frames[i].start_line, want->frames[i].start_line);
		}
		same++;
	}
	tf_symbolizer_stats_get(s2, &st);
	assert_true(same >= 16);
	assert_true(st.symcache_hits >= same); /* none of them from the DWARF */
	tf_symbolizer_free(s2);

	/* the CU kept: addresses of its other functions resolved from its
	 * kept index (no walk of the DIEs, no scan of the line table) as
	 * from the DWARF; a damaged index is not used */
	for (int damaged = 0; damaged < 2; damaged++) {
		if (damaged) {
			/* the last bytes are the CU's record: cut it short */
			char *cut = tf_xasprintf("for f in %s; do n=$(($(stat -c %%s \"$f\") - 7)); "
						 "head -c $n \"$f\" > \"$f.x\" && mv \"$f.x\" \"$f\"; done", kept);
			assert_int_equal(system(cut), 0);
			free(cut);
		}
		kept_lookup(dir, &f, ra - 1, true, &st, &s2);
		size_t other = 0;
		for (uint64_t pc = ra - 4096; pc < ra + 4096; pc += 3) {
			const tf_symloc *want = tf_symbolizer_lookup(s0, (uint32_t)f.pid, 0, pc, false);
			const tf_symloc *got = tf_symbolizer_lookup(s2, (uint32_t)f.pid, 0, pc, false);
			assert_int_equal(!want, !got);
			if (!want || !want->resolved || !want->nframes)
				continue;
			assert_int_equal(got->nframes, want->nframes);
			for (uint32_t i = 0; i < want->nframes; i++) {
				assert_string_equal(got->frames[i].function, want->frames[i].function);
				assert_int_equal(got->frames[i].line, want->frames[i].line);
				assert_true(!want->frames[i].file ||
					    strcmp(got->frames[i].file, want->frames[i].file) == 0);
			}
			if (strcmp(want->frames[want->nframes - 1].function, "sym_outer") != 0)
				other++;
		}
		assert_true(other >= 50);
		tf_symbolizer_stats_get(s2, &st);
		assert_int_equal(st.symcache_cus, damaged ? 0 : 1);
		tf_symbolizer_free(s2);
	}
	tf_symbolizer_free(s0);
	free(kept);
	free(cmd);
	fixture_stop(&f);
	unit_rmtree(dir);
	free(path);
}

/* The C++ fixture started, its maps fed to a new symbolizer; `*ra` the
 * return address into Widget<int>::compute, `*call` its line. */
static tf_symbolizer *cxx_started(fixture *f, char **path, uint64_t *ra, int *call)
{
	*path = fixture_path("symbolize_cxx");
	fixture_start(f, *path, NULL);
	*ra = fixture_addr(f, "ra compute", call);
	tf_symbolizer *s = new_sym();
	feed_maps(s, f->pid, false, true);
	return s;
}

static void test_cxx_demangled(void **state)
{
	(void)state;
	char *path;
	fixture f;
	int call;
	uint64_t ra;
	tf_symbolizer *s = cxx_started(&f, &path, &ra, &call);
	const tf_symloc *l = look(s, f.pid, ra - 1);
	assert_string_equal(l->frames[0].function, "tfx::Widget<int>::compute(int)");
	assert_string_equal(l->frames[0].system_name, "_ZN3tfx6WidgetIiE7computeEi");
	assert_int_equal(l->frames[0].line, call);
	assert_true(ends_with(l->frames[0].file, "symbolize_cxx.cc"));
	tf_symbolizer_free(s);

	tf_symbolizer_opts o;
	tf_symbolizer_opts_init(&o);
	o.demangle = false;
	assert_int_equal(tf_symbolizer_new(&s, &o), 0);
	feed_maps(s, f.pid, false, true);
	l = look(s, f.pid, ra - 1);
	assert_string_equal(l->frames[0].function, "_ZN3tfx6WidgetIiE7computeEi");
	tf_symbolizer_free(s);
	fixture_stop(&f);
	free(path);
}

static void test_demangle_names(void **state)
{
	(void)state;
	struct { const char *in, *out; } cases[] = {
		{ "_ZN3foo3barEv", "foo::bar()" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		/* Rust, legacy mangling: the hash is dropped */
		{ "_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place" },
		/* Rust v0 */
		{ "_RNvCs1234_7mycrate3foo", "mycrate::foo" },
	};
	for (size_t i = 0; i < TF_ARRAY_SIZE(cases); i++) {
		char *d = tf_sym_demangle_dup(cases[i].in);
		assert_non_null(d);
		assert_string_equal(d, cases[i].out);
		free(d);
	}
	assert_null(tf_sym_demangle_dup("main"));
	assert_null(tf_sym_demangle_dup("_Znot_really"));
}

/* The plain beginning of mangled names, read without demangling them: the
 * demangled name begins with it (but for a function template's instance,
 * whose return type is printed first). */
static void test_mangled_lead(void **state)
{
	(void)state;
	struct { const char *in, *lead; bool template_fn; } cases[] = {
		{ "_ZN3foo3barEv", "foo::bar", false },
		{ "_ZNK5Catch7Session3runEv", "Catch::Session::run", false },
		{ "_ZN5Catch7Session3runEiPKPKc", "Catch::Session::run", false },
		{ "_ZZN5Catch7Session3runEvE8instance", "Catch::Session::run", false },
		{ "_ZN5boost9unit_test14unit_test_mainEPFbvEiPPc", "boost::unit_test::unit_test_main", false },
		{ "_ZN3tfx6WidgetIiE7computeEi", "tfx::Widget", false },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector", false },
		{ "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc",
		  "std::__cxx11::basic_string", false },
		{ "_ZNSs6appendEPKc", "std", false },
		{ "_ZSt9terminatev", "std::terminate", false },
		{ "_ZL6helperi", "helper", false },
		{ "_Z4workv", "work", false },
		{ "_ZZ4mainE5count", "main", false },
		{ "_ZN3FooC2Ev", "Foo", false },
		{ "_ZN3foo3barB5cxx11Ev", "foo::bar", false },
		{ "_ZN3foo3barEv.cold", "foo::bar", false },
		{ "_ZN12_GLOBAL__N_13fooEv", "", false },
		{ "_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place", false },
		{ "_ZN4core3ptr40drop_in_place$LT$std..rt..lang_start$GT$17h0123456789abcdefE",
		  "core::ptr", false },
		/* printed "std::basic_ostream<...>& std::endl<...>(...)" */
		{ "_ZSt4endlIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_", "std::endl", true },
		{ "_ZThn8_N3Foo3barEv", "", false },  /* a thunk */
		{ "_RNvCs1234_7mycrate3foo", "", false }, /* Rust v0 */
		{ "_ZN3foo99barEv", "foo", false },    /* a length past the end */
		{ "main", "", false },
	};
	char buf[128];
	for (size_t i = 0; i < TF_ARRAY_SIZE(cases); i++) {
		size_t n = tf_sym_mangled_lead(cases[i].in, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].lead);
		assert_int_equal(n, strlen(cases[i].lead));
		char *d = tf_sym_demangle_dup(cases[i].in);
		if (d && !cases[i].template_fn)
			assert_int_equal(strncmp(d, buf, n), 0);
		free(d);
	}
	/* as much as fits: enough to tell runInternal from run */
	assert_int_equal(tf_sym_mangled_lead("_ZN5Catch7Session11runInternalEv", buf, 20), 19);
	assert_string_equal(buf, "Catch::Session::run");
	assert_int_equal(tf_sym_mangled_lead("_ZN5Catch7Session3runEv", buf, 8), 7);
	assert_string_equal(buf, "Catch::");
	assert_int_equal(tf_sym_mangled_lead(NULL, buf, sizeof(buf)), 0);
}

typedef struct {
	TF_VEC(char *) names;
} fn_names;

static void keep_name(void *ctx, const char *name)
{
	fn_names *f = ctx;
	tf_vec_push(&f->names, tf_xstrdup(name));
}

static bool has_name(const fn_names *f, const char *name)
{
	for (size_t i = 0; i < f->names.n; i++)
		if (strcmp(f->names.v[i], name) == 0)
			return true;
	return false;
}

static void fn_names_free(fn_names *f)
{
	for (size_t i = 0; i < f->names.n; i++)
		free(f->names.v[i]);
	tf_vec_free(&f->names);
}

/* A binary none of whose functions begins with a set of prefixes is known
 * to be one by the next symbolizer with the same user cache, without its
 * symbol table; a set some function begins with is asked of the table
 * every time, and so is another set. */
static void test_functions_named_kept(void **state)
{
	(void)state;
	char *path = fixture_path("symbolize_cxx"), *dir = unit_tmpdir();
	fixture f;
	int call;
	const char *const none[] = { "Catch::Session::run", "doctest::Context::run", NULL };
	const char *const other[] = { "Catch::Session::run", NULL };
	const char *const widget[] = { "tfx::Widget", NULL };

	fixture_start(&f, path, NULL);
	uint64_t ra = fixture_addr(&f, "ra compute", &call);
	for (int run = 0; run < 2; run++) {
		tf_symbolizer_opts o;
		tf_symbolizer *s;
		tf_symbolizer_stats st;
		fn_names some = { 0 };
		tf_symbolizer_opts_init(&o);
		o.persist_dir = dir;
		assert_int_equal(tf_symbolizer_new(&s, &o), 0);
		feed_maps(s, f.pid, false, true);
		assert_true(look(s, f.pid, ra - 1)->resolved); /* it has DWARF: kept */
		assert_int_equal(tf_symbolizer_functions_named(s, (uint32_t)f.pid, ra, none, keep_name, &some), 0);
		assert_int_equal(tf_symbolizer_functions_named(s, (uint32_t)f.pid, ra, widget, keep_name, &some), 1);
		tf_symbolizer_stats_get(s, &st);
		assert_int_equal(st.names_kept, run); /* the first run asked the table */
		if (run == 1)
			assert_int_equal(tf_symbolizer_functions_named(s, (uint32_t)f.pid, ra, other, keep_name,
								       &some), 0);
		tf_symbolizer_stats_get(s, &st);
		assert_int_equal(st.names_kept, run);
		assert_int_equal(some.names.n, 1);
		assert_string_equal(some.names.v[0], "tfx::Widget<int>::compute(int)");
		fn_names_free(&some);
		tf_symbolizer_save(s);
		tf_symbolizer_free(s);
	}
	fixture_stop(&f);
	unit_rmtree(dir);
	free(path);
}

/* A kept symbol index whose name offsets are damaged (its entries are read
 * as they are used, not checked all at once) gives no name for them, not
 * a read past the string table: the address is named from the DWARF as
 * before, and the damaged entries name no function. */
static void test_kept_symbols_damaged(void **state)
{
	(void)state;
	char *path = fixture_path("symbolize_cxx"), *dir = unit_tmpdir();
	const char *const widget[] = { "tfx::Widget", NULL };
	fixture f;
	int call;
	tf_symbolizer_opts o;
	tf_symbolizer *s;

	fixture_start(&f, path, NULL);
	uint64_t ra = fixture_addr(&f, "ra compute", &call);
	tf_symbolizer_opts_init(&o);
	o.persist_dir = dir;
	assert_int_equal(tf_symbolizer_new(&s, &o), 0);
	feed_maps(s, f.pid, false, true);
	assert_string_equal(look(s, f.pid, ra - 1)->frames[0].function, "tfx::Widget<int>::compute(int)");
	tf_symbolizer_save(s);
	tf_symbolizer_free(s);

	/* every entry's name offset past any string table; the answers kept
	 * apart go, so that the address is resolved again */
	char *symdir = tf_xasprintf("%s/sym", dir);
	DIR *d = opendir(symdir);
	struct dirent *e;
	size_t damaged = 0;
	assert_non_null(d);
	while ((e = readdir(d))) {
		char *p = tf_xasprintf("%s/%s", symdir, e->d_name);
		if (strstr(e->d_name, "-di")) {
			assert_int_equal(unlink(p), 0);
		} else if (strstr(e->d_name, ".syms")) {
			tf_buf b = TF_BUF_INIT;
			assert_int_equal(tf_file_read(&b, p), 0);
			const size_t header = 48, entry = 24; /* syms_header, tf_sym_ivl */
			size_t n = (b.len - header) / (entry + 8);
			for (size_t i = 0; i < n; i++) {
				uint32_t bad = 0xfffffff0u;
				memcpy(b.ptr + header + i * entry + 16, &bad, 4);
			}
			assert_int_equal(tf_file_write_atomic(p, b.ptr, b.len), 0);
			tf_buf_free(&b);
			damaged++;
		}
		free(p);
	}
	closedir(d);
	assert_true(damaged > 0);

	assert_int_equal(tf_symbolizer_new(&s, &o), 0);
	feed_maps(s, f.pid, false, true);
	const tf_symloc *l = look(s, f.pid, ra - 1);
	assert_true(l->resolved);
	assert_string_equal(l->frames[0].function, "tfx::Widget<int>::compute(int)");
	assert_int_equal(l->frames[0].line, call);
	fn_names some = { 0 };
	assert_int_equal(tf_symbolizer_functions_named(s, (uint32_t)f.pid, ra, widget, keep_name, &some), 0);
	fn_names_free(&some);
	tf_symbolizer_free(s);
	fixture_stop(&f);
	free(symdir);
	unit_rmtree(dir);
	free(path);
}

/* A binary's functions named by a prefix: every function of the full list
 * that begins with one, and (the mangled names' beginnings settling the
 * rest) none of the others. */
static void test_functions_named(void **state)
{
	(void)state;
	char *path;
	fixture f;
	int call;
	uint64_t ra;
	tf_symbolizer *s = cxx_started(&f, &path, &ra, &call);
	fn_names all = { 0 };
	size_t n_all = tf_symbolizer_functions(s, (uint32_t)f.pid, ra, keep_name, &all);
	assert_int_equal(n_all, all.names.n);
	assert_true(has_name(&all, "tfx::Widget<int>::compute(int)"));
	assert_true(has_name(&all, "sym_record()"));

	const char *const sets[][4] = {
		{ "tfx::Widget", NULL },
		{ "sym_rec", "main", NULL },
		{ "tfx::Widget<int>::comp", NULL }, /* past the plain beginning */
		{ "Catch::Session::run", "doctest::Context::run", NULL },
		{ NULL },
	};
	for (size_t k = 0; k < TF_ARRAY_SIZE(sets); k++) {
		fn_names some = { 0 };
		size_t n = tf_symbolizer_functions_named(s, (uint32_t)f.pid, ra, sets[k], keep_name, &some);
		assert_int_equal(n, some.names.n);
		size_t want = 0;
		for (size_t i = 0; i < all.names.n; i++) {
			bool begins = false;
			for (size_t j = 0; sets[k][j]; j++)
				begins |= strncmp(all.names.v[i], sets[k][j], strlen(sets[k][j])) == 0;
			if (begins) {
				assert_true(has_name(&some, all.names.v[i]));
				want++;
			}
		}
		assert_int_equal(n, want);
		fn_names_free(&some);
	}
	fn_names some = { 0 };
	const char *const widget[] = { "tfx::Widget", NULL };
	assert_int_equal(tf_symbolizer_functions_named(s, (uint32_t)f.pid, ra, widget, keep_name, &some), 1);
	assert_string_equal(some.names.v[0], "tfx::Widget<int>::compute(int)");
	fn_names_free(&some);
	assert_int_equal(tf_symbolizer_functions_named(s, (uint32_t)f.pid, 1, widget, keep_name, &some), 0);
	fn_names_free(&all);
	tf_symbolizer_free(s);
	fixture_stop(&f);
	free(path);
}

/* A copy of the fixture, run, then deleted while it runs: pinned live. */
static void test_deleted_binary(void **state)
{
	(void)state;
	char *src = fixture_path("symbolize"), *dir = unit_tmpdir(), cmd[8400], copy[4200];
	fixture f;

	snprintf(copy, sizeof(copy), "%s/victim", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, copy);
	assert_int_equal(system(cmd), 0);
	fixture_start(&f, copy, NULL);
	uint64_t fn = fixture_addr(&f, "fn sym_hot_loop", NULL);
	assert_int_equal(unlink(copy), 0);

	tf_symbolizer *live = new_sym(), *late = new_sym();
	feed_maps(live, f.pid, true, true); /* the recorder saw it during the run */
	feed_maps(late, f.pid, false, true);
	fixture_stop(&f);

	const tf_symloc *l = look(live, f.pid, fn);
	assert_true(l->resolved);
	assert_string_equal(l->frames[0].function, "sym_hot_loop");
	assert_true(ends_with(l->module, "/victim"));
	tf_symbolizer_stats st;
	tf_symbolizer_stats_get(live, &st);
	assert_true(st.pinned >= 1);
	assert_int_equal(st.missing_files, 0);

	/* without the live pin the file is gone for good */
	l = look(late, f.pid, fn);
	assert_false(l->resolved);
	assert_non_null(strstr(l->frames[0].function, "victim+0x"));
	tf_symbolizer_stats_get(late, &st);
	assert_int_equal(st.missing_files, 1);
	assert_int_equal(st.unresolved, 1);

	tf_symbolizer_free(live);
	tf_symbolizer_free(late);
	unit_rmtree(dir);
	free(src);
}

static void test_memfd_mapping(void **state)
{
	(void)state;
	char *path = fixture_path("symbolize");
	fixture f;

	fixture_start(&f, path, "memfd");
	uint64_t addr = fixture_addr(&f, "memfd sym_hot_loop", NULL);
	tf_symbolizer *s = new_sym();
	feed_maps(s, f.pid, true, true);
	fixture_stop(&f); /* the memfd dies with the process, but for our pin */
	const tf_symloc *l = look(s, f.pid, addr);
	assert_true(l->resolved);
	assert_string_equal(l->frames[0].function, "sym_hot_loop");
	assert_true(ends_with(l->frames[0].file, "symbolize.c"));
	assert_string_equal(l->module, "/memfd:tfcode");
	tf_symbolizer_free(s);
	free(path);
}

/* fork inherits, exec clears, an overlapping mmap replaces, exit ends */
/* An anonymous mapping over the page of `addr` in process `pid`. */
static void map_anon_page(tf_symbolizer *s, uint32_t pid, uint64_t addr, uint64_t time)
{
	tf_rec_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = TF_REC_MMAP;
	ev.pid = ev.tid = pid;
	ev.time = time;
	ev.mmap.start = addr & ~4095ULL;
	ev.mmap.len = 4096;
	ev.mmap.filename = "//anon";
	tf_symbolizer_event(s, &ev);
}

static void test_process_events(void **state)
{
	(void)state;
	char *path = fixture_path("symbolize");
	fixture f;
	tf_symbolizer *s = new_sym();
	const uint32_t child = 4100001, thread = 4100002;

	fixture_start(&f, path, NULL);
	uint64_t fn = fixture_addr(&f, "fn sym_hot_loop", NULL);
	uint64_t mainp = fixture_addr(&f, "fn main", NULL);
	feed_maps(s, f.pid, false, true);
	fixture_stop(&f);

	assert_string_equal(look(s, (pid_t)child, fn)->frames[0].function, "[unknown]");
	send_simple(s, TF_REC_FORK, child, child, (uint32_t)f.pid, 2000, false);
	assert_string_equal(look(s, (pid_t)child, fn)->frames[0].function, "sym_hot_loop");
	/* a new thread of the child shares its address space */
	send_simple(s, TF_REC_FORK, child, thread, child, 2001, false);
	assert_string_equal(look(s, (pid_t)child, mainp)->frames[0].function, "main");

	/* an anonymous mapping over sym_hot_loop's page replaces that part */
	map_anon_page(s, child, fn, 2002);
	if ((mainp & ~4095ULL) != (fn & ~4095ULL)) {
		const tf_symloc *l = look(s, (pid_t)child, mainp);
		assert_string_equal(l->frames[0].function, "main");
	}
	const tf_symloc *l = look(s, (pid_t)child, fn);
	assert_false(l->resolved);
	assert_string_equal(l->frames[0].function, "[unknown]");
	assert_string_equal(l->module, "//anon");
	/* the parent is untouched */
	assert_string_equal(look(s, f.pid, fn)->frames[0].function, "sym_hot_loop");

	/* exec: the old image is gone */
	tf_rec_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = TF_REC_COMM;
	ev.pid = ev.tid = child;
	ev.comm.comm = "other";
	ev.comm.exec = true;
	tf_symbolizer_event(s, &ev);
	assert_false(look(s, (pid_t)child, mainp)->resolved);
	/* a thread's exit ends nothing, the process's exit ends the process */
	send_simple(s, TF_REC_EXIT, (uint32_t)f.pid, (uint32_t)f.pid + 1, (uint32_t)f.pid, 3000, false);
	assert_true(look(s, f.pid, mainp)->resolved);
	send_simple(s, TF_REC_EXIT, (uint32_t)f.pid, (uint32_t)f.pid, (uint32_t)f.pid, 3001, false);
	assert_string_equal(look(s, f.pid, 0x1234)->frames[0].function, "[unknown]");
	tf_symbolizer_free(s);
	free(path);
}

/* The memory of recent answers starts small and grows with the lookups
 * (TF_SYM_LOOKUP_SLOTS_FIRST to _MAX): the answers are the same across its
 * growths, and an address-space change still empties it after them. */
static void test_lookup_memory_grows(void **state)
{
	(void)state;
	char *path = fixture_path("symbolize");
	fixture f;
	tf_symbolizer *s = new_sym();
	const uint32_t child = 4200001;

	fixture_start(&f, path, NULL);
	uint64_t fn = fixture_addr(&f, "fn sym_hot_loop", NULL);
	uint64_t mainp = fixture_addr(&f, "fn main", NULL);
	feed_maps(s, f.pid, false, true);
	fixture_stop(&f);
	send_simple(s, TF_REC_FORK, child, child, (uint32_t)f.pid, 2000, false);

	/* past every growth, with as many keys as slots at the largest */
	for (uint32_t i = 0; i < 6 * TF_SYM_LOOKUP_SLOTS_MAX; i++) {
		uint32_t pid = i % 3 == 0 ? child : (uint32_t)f.pid;
		uint64_t addr = (i & 1 ? fn : mainp) + (i / 2) % 8;
		const tf_symloc *l = look(s, (pid_t)pid, addr);
		assert_string_equal(l->frames[0].function, i & 1 ? "sym_hot_loop" : "main");
	}
	assert_int_equal(s->lookup_slots, TF_SYM_LOOKUP_SLOTS_MAX);

	map_anon_page(s, child, fn, 2001);
	assert_string_equal(look(s, (pid_t)child, fn)->frames[0].function, "[unknown]");
	assert_string_equal(look(s, f.pid, fn)->frames[0].function, "sym_hot_loop");
	tf_symbolizer_free(s);
	free(path);
}

/* The address of a function exported by our own [vdso], from its dynsym. */
static uint64_t vdso_symbol(const char *want)
{
	char line[512];
	unsigned long long lo = 0, hi;
	FILE *fp = fopen("/proc/self/maps", "r");
	while (fp && fgets(line, sizeof(line), fp))
		if (strstr(line, "[vdso]"))
			assert_int_equal(sscanf(line, "%llx-%llx", &lo, &hi), 2);
	fclose(fp);
	if (!lo)
		return 0;
	const Elf64_Ehdr *eh = (const void *)(uintptr_t)lo;
	const Elf64_Shdr *sh = (const void *)((const char *)eh + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const Elf64_Sym *sym = (const void *)((const char *)eh + sh[i].sh_offset);
		const char *strs = (const char *)eh + sh[sh[i].sh_link].sh_offset;
		for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++)
			if (strcmp(strs + sym[k].st_name, want) == 0)
				return (uint64_t)(uintptr_t)eh + sym[k].st_value;
	}
	fail_msg("no '%s' in the vdso", want);
	return 0;
}

static void test_vdso(void **state)
{
	(void)state;
	char *dir = unit_tmpdir();
	tf_symbolizer *s;
	tf_symbolizer_opts o;

	tf_symbolizer_opts_init(&o);
	o.cache_dir = dir;
	assert_int_equal(tf_symbolizer_new(&s, &o), 0);
	feed_maps(s, getpid(), false, true);
	uint64_t addr = vdso_symbol("__vdso_clock_gettime");
	if (!addr) {
		tf_symbolizer_free(s);
		unit_rmtree(dir);
		skip(); /* this process has no [vdso] (valgrind unmaps it) */
	}
	const tf_symloc *l = look(s, getpid(), addr + 1);
	assert_true(l->resolved);
	assert_string_equal(l->module, "[vdso]");
	assert_non_null(strstr(l->frames[0].function, "clock_gettime"));
	tf_symbolizer_free(s);
	unit_rmtree(dir);
}

static void test_kernel_and_vsyscall(void **state)
{
	(void)state;
	tf_buf b = TF_BUF_INIT;
	unsigned long long addr = 0;
	char name[256] = "";
	tf_symbolizer *s = new_sym();

	assert_int_equal(tf_file_read(&b, "/proc/kallsyms"), 0);
	for (char *p = b.ptr, *nl; p && *p; p = nl ? nl + 1 : NULL) {
		char type;
		if ((nl = strchr(p, '\n')))
			*nl = '\0'; /* sscanf would strlen() the whole rest */
		if (sscanf(p, "%llx %c %255s", &addr, &type, name) == 3 && addr &&
		    (type == 'T' || type == 't') && strcmp(name, "schedule") == 0)
			break;
		addr = 0;
	}
	tf_buf_free(&b);
	const tf_symloc *l;
	if (addr) {
		l = tf_symbolizer_lookup(s, 1, 0, addr + 4, true);
		assert_true(l->resolved);
		assert_string_equal(l->frames[0].function, "schedule");
		assert_string_equal(l->module, "[kernel.kallsyms]");
	} else {
		/* kptr_restrict hides kernel addresses from us */
		l = tf_symbolizer_lookup(s, 1, 0, 0xffffffff81000100ULL, true);
		assert_false(l->resolved);
		assert_string_equal(l->frames[0].function, "[kernel]");
	}
	l = tf_symbolizer_lookup(s, 1, 0, 0xffffffffff600000ULL, false);
	assert_string_equal(l->frames[0].function, "gettimeofday");
	assert_string_equal(l->module, "[vsyscall]");
	tf_symbolizer_free(s);

	/* kernel symbols off: frames say "[kernel]" */
	tf_symbolizer_opts o;
	tf_symbolizer_opts_init(&o);
	o.kernel = false;
	assert_int_equal(tf_symbolizer_new(&s, &o), 0);
	l = tf_symbolizer_lookup(s, 1, 0, 0xffffffff81000100ULL, true);
	assert_string_equal(l->frames[0].function, "[kernel]");
	tf_symbolizer_free(s);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void anon_mmap(tf_symbolizer *s, uint32_t pid, uint64_t start, uint64_t len, uint64_t time)
{
	tf_rec_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = TF_REC_MMAP;
	ev.pid = ev.tid = pid;
	ev.time = time;
	ev.mmap.start = start;
	ev.mmap.len = len;
	ev.mmap.filename = "//anon";
	tf_symbolizer_event(s, &ev);
}

/* Perf maps read at exit (before /tmp is cleaned), later lines winning,
 * and a reused pid getting the map of its own instance. */
static void test_jit_maps(void **state)
{
	(void)state;
	const uint32_t pid = 4100100;
	char path[64];
	tf_symbolizer *s = new_sym();

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	/* during the run: first instance writes its map and exits */
	write_file(path, "7f0000001000 100 JS:*first /app/a.js:1\n"
			 "0x7f0000001080 40 JS:*second\n"
			 "garbage line\n"
			 "7f0000002000 10 Python:tail\r\n");
	send_simple(s, TF_REC_EXIT, pid, pid, pid, 5000, true);
	/* the second instance of the pid writes another one */
	write_file(path, "7f0000001000 100 JS:*reborn\n");
	send_simple(s, TF_REC_EXIT, pid, pid, pid, 9000, true);
	unlink(path); /* the suite cleans /tmp before we symbolize */

	/* replay: instance one */
	send_simple(s, TF_REC_FORK, pid, pid, 1, 1000, false);
	anon_mmap(s, pid, 0x7f0000000000ULL, 0x10000, 1001);
	const tf_symloc *l = look(s, (pid_t)pid, 0x7f0000001010ULL);
	assert_true(l->resolved);
	assert_string_equal(l->frames[0].function, "JS:*first /app/a.js:1");
	assert_string_equal(l->module, "[jit]");
	assert_string_equal(look(s, (pid_t)pid, 0x7f0000001090ULL)->frames[0].function, "JS:*second");
	assert_string_equal(look(s, (pid_t)pid, 0x7f0000002004ULL)->frames[0].function, "Python:tail");
	l = look(s, (pid_t)pid, 0x7f0000003000ULL);
	assert_false(l->resolved);
	assert_string_equal(l->frames[0].function, "[unknown]");
	send_simple(s, TF_REC_EXIT, pid, pid, pid, 5000, false);
	/* instance two, no mapping event at all: still the JIT's */
	send_simple(s, TF_REC_FORK, pid, pid, 1, 6000, false);
	l = look(s, (pid_t)pid, 0x7f0000001090ULL);
	assert_string_equal(l->frames[0].function, "JS:*reborn");

	tf_symbolizer_stats st;
	tf_symbolizer_stats_get(s, &st);
	assert_int_equal(st.jit_maps, 2);
	tf_symbolizer_free(s);
}

/* node --perf-basic-prof: a hot JS function found through its perf map. */
static void test_jit_node(void **state)
{
	(void)state;
	if (system("command -v node >/dev/null 2>&1") != 0)
		skip(); /* node is not installed */
	const char *script =
		"function hotJsFunction(n){let x=0;for(let i=0;i<n;i++)x+=i%7;return x}"
		"let t=0;for(let k=0;k<3000;k++)t+=hotJsFunction(1000);"
		"console.log('pid '+process.pid);console.log('ready');"
		"process.stdin.resume();process.stdin.on('end',()=>process.exit(0));";
	int in[2], out[2];
	char line[256], path[64], *dir = unit_tmpdir();
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (chdir(dir) != 0) /* node leaves its v8 logs in the cwd */
			_exit(126);
		execlp("node", "node", "--perf-basic-prof", "-e", script, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	FILE *fo = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), fo) && strncmp(line, "ready", 5) != 0)
		;
	tf_symbolizer *s = new_sym();
	send_simple(s, TF_REC_FORK, (uint32_t)pid, (uint32_t)pid, 1, 10, false);
	feed_maps(s, pid, true, true);

	/* where V8 put hotJsFunction, from the map it writes */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_file_read(&b, path), 0);
	unsigned long long start = 0, size = 0;
	for (char *p = b.ptr, *nl; p && *p; p = nl ? nl + 1 : NULL) {
		if ((nl = strchr(p, '\n')))
			*nl = '\0';
		if (strstr(p, "hotJsFunction") && sscanf(p, "%llx %llx", &start, &size) == 2) {
			print_message("# node: %s\n", p);
			break;
		}
		start = 0;
	}
	tf_buf_free(&b);
	assert_true(start != 0);

	close(in[1]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	fclose(fo);
	/* the recorder sees the exit, then the perf map disappears */
	send_simple(s, TF_REC_EXIT, (uint32_t)pid, (uint32_t)pid, (uint32_t)pid, 20, true);
	unlink(path);

	const tf_symloc *l = look(s, pid, start + size / 2);
	assert_true(l->resolved);
	assert_string_equal(l->module, "[jit]");
	assert_non_null(strstr(l->frames[0].function, "hotJsFunction"));
	tf_symbolizer_free(s);
	unit_rmtree(dir);
}

/* libc's DWARF lives in /usr/lib/debug/.build-id (libc6-dbg); a copy of a
 * fixture finds its own through .gnu_debuglink. */
static void test_separate_debuginfo(void **state)
{
	(void)state;
	tf_symbolizer *s = new_sym();
	feed_maps(s, getpid(), false, true);
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	assert_non_null(fn);
	const tf_symloc *l = look(s, getpid(), (uint64_t)(uintptr_t)fn);
	assert_true(l->resolved);
	assert_non_null(strstr(l->frames[0].function, "getpid"));
	assert_true(ends_with(l->module, "libc.so.6"));
	if (!l->frames[0].file)
		fail_msg("no file:line for libc's getpid: is libc6-dbg installed?");
	tf_symbolizer_free(s);

	char *src = fixture_path("symbolize"), *dir = unit_tmpdir(), cmd[12800];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && cp '%s' prog && objcopy --only-keep-debug prog prog.debug && "
		 "strip --strip-debug prog && objcopy --add-gnu-debuglink=prog.debug prog && "
		 "! readelf -S prog | grep -q debug_line", dir, src);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/prog", dir);
	fixture f;
	int call;
	fixture_start(&f, cmd, NULL);
	uint64_t ra = fixture_addr(&f, "ra sym_hot_loop", &call);
	s = new_sym();
	feed_maps(s, f.pid, false, true);
	fixture_stop(&f);
	l = look(s, f.pid, ra - 1);
	assert_string_equal(l->frames[0].function, "sym_hot_loop");
	assert_int_equal(l->frames[0].line, call);
	tf_symbolizer_free(s);
	unit_rmtree(dir);
	free(src);
}

/* One line per address: every frame's function, file and line. */
static char *describe(tf_symbolizer *s, const uint64_t *addrs, size_t n, bool kernel)
{
	tf_buf b = TF_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		const tf_symloc *l = tf_symbolizer_lookup(s, (uint32_t)getpid(), 0, addrs[i], kernel);
		tf_buf_printf(&b, "%s:", l->module ? l->module : "?");
		for (uint32_t j = 0; j < l->nframes; j++)
			tf_buf_printf(&b, " %s %s:%d", l->frames[j].function,
				      l->frames[j].file ? l->frames[j].file : "?", l->frames[j].line);
		tf_buf_putc(&b, '\n');
	}
	return tf_buf_detach(&b);
}

static char *with_cache(const char *dir, const uint64_t *addrs, size_t n, bool kernel,
			tf_symbolizer_stats *st)
{
	tf_symbolizer *s;
	tf_symbolizer_opts o;
	tf_symbolizer_opts_init(&o);
	o.persist_dir = dir;
	assert_int_equal(tf_symbolizer_new(&s, &o), 0);
	feed_maps(s, getpid(), false, true);
	char *d = describe(s, addrs, n, kernel);
	tf_symbolizer_stats_get(s, st);
	/* libdw must be reading the copy, not the compressed original */
	tf_buf maps = TF_BUF_INIT;
	assert_int_equal(tf_file_read(&maps, "/proc/self/maps"), 0);
	char *copy = tf_xasprintf("%s/debug/", dir);
	if (!kernel && (!strstr(maps.ptr, copy) || strstr(maps.ptr, "/usr/lib/debug/.build-id/")))
		fail_msg("debug files mapped:\n%s", maps.ptr);
	free(copy);
	tf_buf_free(&maps);
	tf_symbolizer_free(s);
	return d;
}

static void test_persist_cache(void **state)
{
	(void)state;
	static const char *const fns[] = { "getpid", "qsort", "strtod", "malloc", "fprintf" };
	uint64_t addrs[8];
	size_t n = 0, nuser;
	tf_buf b = TF_BUF_INIT;
	unsigned long long kaddr = 0;

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *fn = dlsym(RTLD_DEFAULT, fns[i]);
		assert_non_null(fn);
		addrs[n++] = (uint64_t)(uintptr_t)fn + 2; /* inside, past the entry */
	}
	nuser = n;
	assert_int_equal(tf_file_read(&b, "/proc/kallsyms"), 0);
	for (char *p = b.ptr, *nl; p && *p && !kaddr; p = nl ? nl + 1 : NULL) {
		char type, name[256];
		if ((nl = strchr(p, '\n')))
			*nl = '\0';
		if (sscanf(p, "%llx %c %255s", &kaddr, &type, name) != 3 || strcmp(name, "schedule") != 0)
			kaddr = 0;
	}
	tf_buf_free(&b);
	if (kaddr)
		addrs[n++] = kaddr + 4;

	/* without a cache: what every cached answer must equal */
	tf_symbolizer *s = new_sym();
	feed_maps(s, getpid(), false, true);
	char *want = describe(s, addrs, nuser, false), *want_k = NULL;
	if (kaddr)
		want_k = describe(s, addrs + nuser, 1, true);
	tf_symbolizer_free(s);
	/* with libc6-dbg's file:line: the part the debug copy must keep */
	if (!strstr(want, "getpid") || !strstr(want, "qsort") || !strstr(want, ".c:"))
		fail_msg("%s", want);
	if (want_k)
		assert_non_null(strstr(want_k, "schedule"));

	char *dir = unit_tmpdir(), *cache = tf_xasprintf("%s/cache", dir), *got;
	tf_symbolizer_stats st;
	struct stat sb;
	char kpath[4200];
	snprintf(kpath, sizeof(kpath), "%s/kallsyms", cache);

	/* 1st: the cache is made (libc6-dbg's DWARF is compressed) */
	got = with_cache(cache, addrs, nuser, false, &st);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(st.debug_uncompressed, 1);
	assert_int_equal(st.debug_cached, 0);
	if (kaddr) {
		got = with_cache(cache, addrs + nuser, 1, true, &st);
		assert_string_equal(got, want_k);
		free(got);
		assert_false(st.kallsyms_cached);
		assert_int_equal(stat(kpath, &sb), 0);
	}

	/* 2nd: both come from it, with the same answers */
	got = with_cache(cache, addrs, nuser, false, &st);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(st.debug_cached, 1);
	assert_int_equal(st.debug_uncompressed, 0);
	if (kaddr) {
		got = with_cache(cache, addrs + nuser, 1, true, &st);
		assert_string_equal(got, want_k);
		free(got);
		assert_true(st.kallsyms_cached);

		/* a truncated file is not used, and is written again */
		assert_int_equal(truncate(kpath, sb.st_size / 2), 0);
		got = with_cache(cache, addrs + nuser, 1, true, &st);
		assert_string_equal(got, want_k);
		free(got);
		assert_false(st.kallsyms_cached);
		struct stat sb2;
		assert_int_equal(stat(kpath, &sb2), 0);
		assert_int_equal(sb2.st_size, sb.st_size);

		/* another boot's file is not used either */
		FILE *f = fopen(kpath, "r+b");
		assert_non_null(f);
		assert_int_equal(fseek(f, 40, SEEK_SET), 0); /* inside the boot id */
		int c = fgetc(f);
		assert_int_equal(fseek(f, 40, SEEK_SET), 0);
		fputc(c == 'x' ? 'y' : 'x', f);
		fclose(f);
		got = with_cache(cache, addrs + nuser, 1, true, &st);
		assert_string_equal(got, want_k);
		free(got);
		assert_false(st.kallsyms_cached);
	}

	/* a damaged debug copy is replaced, answers unchanged */
	char cmd[8400];
	snprintf(cmd, sizeof(cmd), "for f in '%s'/debug/*.debug; do echo junk >\"$f\"; done", cache);
	assert_int_equal(system(cmd), 0);
	got = with_cache(cache, addrs, nuser, false, &st);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(st.debug_uncompressed, 1);

	free(want);
	free(want_k);
	free(cache);
	unit_rmtree(dir);
}

static void mmap_file(tf_symbolizer *s, uint32_t pid, const char *path, uint64_t start,
		      uint64_t len, uint64_t pgoff)
{
	struct stat st;
	tf_rec_event ev;
	memset(&ev, 0, sizeof(ev));
	if (stat(path, &st) == 0) {
		ev.mmap.maj = major(st.st_dev);
		ev.mmap.min = minor(st.st_dev);
		ev.mmap.ino = st.st_ino;
	}
	ev.type = TF_REC_MMAP;
	ev.pid = ev.tid = pid;
	ev.mmap.start = start;
	ev.mmap.len = len;
	ev.mmap.pgoff = pgoff;
	ev.mmap.prot = PROT_READ | PROT_EXEC;
	ev.mmap.filename = path;
	tf_symbolizer_live(s, &ev);
	tf_symbolizer_event(s, &ev);
}

static void test_bad_input(void **state)
{
	(void)state;
	char *src = fixture_path("symbolize"), *dir = unit_tmpdir(), p[4200], cmd[8800];
	tf_symbolizer *s = new_sym();
	tf_symbolizer_stats st;
	const uint32_t pid = 4100200;

	/* a file that does not exist */
	mmap_file(s, pid, "/nonexistent/libfoo.so", 0x10000, 0x1000, 0x2000);
	const tf_symloc *l = look(s, (pid_t)pid, 0x10010);
	assert_false(l->resolved);
	assert_string_equal(l->frames[0].function, "libfoo.so+0x2010");
	assert_string_equal(l->module, "/nonexistent/libfoo.so");

	/* truncated ELF: within the program headers (unusable), and after
	 * them (loads, but has nothing to say); text that is no ELF at all */
	snprintf(p, sizeof(p), "%s/trunc.so", dir);
	snprintf(cmd, sizeof(cmd), "head -c 200 '%s' > '%s'", src, p);
	assert_int_equal(system(cmd), 0);
	mmap_file(s, pid, p, 0x20000, 0x1000, 0);
	l = look(s, (pid_t)pid, 0x20020);
	assert_string_equal(l->frames[0].function, "trunc.so+0x20");
	snprintf(p, sizeof(p), "%s/trunc2.so", dir);
	snprintf(cmd, sizeof(cmd), "head -c 3000 '%s' > '%s'", src, p);
	assert_int_equal(system(cmd), 0);
	mmap_file(s, pid, p, 0x28000, 0x1000, 0x1000);
	l = look(s, (pid_t)pid, 0x28020);
	assert_false(l->resolved);
	assert_string_equal(l->frames[0].function, "trunc2.so+0x1020");
	snprintf(p, sizeof(p), "%s/text.so", dir);
	write_file(p, "not an ELF file\n");
	mmap_file(s, pid, p, 0x30000, 0x1000, 0);
	assert_string_equal(look(s, (pid_t)pid, 0x30001)->frames[0].function, "text.so+0x1");
	/* a file replaced after it was mapped (another inode) is not used */
	tf_rec_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = TF_REC_MMAP;
	ev.pid = ev.tid = pid;
	ev.mmap.start = 0x40000;
	ev.mmap.len = 0x1000;
	ev.mmap.ino = 1; /* not the inode of the file now at that path */
	ev.mmap.filename = src;
	tf_symbolizer_event(s, &ev);
	assert_false(look(s, (pid_t)pid, 0x40000)->resolved);
	/* unknown process, address in no mapping, NULL file name */
	assert_string_equal(look(s, 12345678, 0x1000)->frames[0].function, "[unknown]");
	assert_string_equal(look(s, (pid_t)pid, 0x90000)->frames[0].function, "[unknown]");
	ev.mmap.filename = NULL;
	ev.mmap.start = 0x50000;
	tf_symbolizer_event(s, &ev);
	tf_symbolizer_live(s, &ev);
	assert_false(look(s, (pid_t)pid, 0x50000)->resolved);
	/* zero-length and wrapping mappings are ignored */
	ev.mmap.filename = "//anon";
	ev.mmap.start = ~0ULL - 10;
	tf_symbolizer_event(s, &ev);
	ev.mmap.len = 0;
	tf_symbolizer_event(s, &ev);

	tf_symbolizer_stats_get(s, &st);
	assert_int_equal(st.missing_files, 2);
	assert_int_equal(st.bad_files, 2);
	assert_int_equal(st.modules, 1);
	assert_int_equal(st.unresolved, st.lookups);
	tf_symbolizer_free(s);

	/* a stripped binary: only what .dynsym knows */
	snprintf(p, sizeof(p), "%s/stripped", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && strip --strip-all '%s'", src, p, p);
	assert_int_equal(system(cmd), 0);
	fixture f;
	fixture_start(&f, p, NULL);
	uint64_t fn = fixture_addr(&f, "fn sym_hot_loop", NULL);
	s = new_sym();
	feed_maps(s, f.pid, false, true);
	fixture_stop(&f);
	l = look(s, f.pid, fn);
	assert_false(l->resolved);
	assert_non_null(strstr(l->frames[0].function, "stripped+0x"));
	assert_non_null(l->build_id);
	tf_symbolizer_stats_get(s, &st);
	assert_int_equal(st.unresolved, 1);
	assert_int_equal(st.bad_files, 0);
	tf_symbolizer_free(s);

	unit_rmtree(dir);
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_inlined_frames),
		cmocka_unit_test(test_line_tables),
		cmocka_unit_test(test_function_index),
		cmocka_unit_test(test_symtab_in_place),
		cmocka_unit_test(test_kept_symbol_index),
		cmocka_unit_test(test_kept_answers),
		cmocka_unit_test(test_kept_segments),
		cmocka_unit_test(test_cxx_demangled),
		cmocka_unit_test(test_demangle_names),
		cmocka_unit_test(test_mangled_lead),
		cmocka_unit_test(test_functions_named),
		cmocka_unit_test(test_functions_named_kept),
		cmocka_unit_test(test_kept_symbols_damaged),
		cmocka_unit_test(test_deleted_binary),
		cmocka_unit_test(test_memfd_mapping),
		cmocka_unit_test(test_process_events),
		cmocka_unit_test(test_lookup_memory_grows),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_kernel_and_vsyscall),
		cmocka_unit_test(test_jit_maps),
		cmocka_unit_test(test_jit_node),
		cmocka_unit_test(test_separate_debuginfo),
		cmocka_unit_test(test_persist_cache),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

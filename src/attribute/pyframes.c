/*
 * pyframes.c - a CPython process's samples with their Python frames.
 *
 * The recorder read each sampled thread's Python stack as the sample was
 * taken (record/pyread.c) and spooled it just before the sample; here it
 * joins the native stack. Each C-level call of the evaluation loop
 * (_PyEval_EvalFrameDefault) runs a group of Python frames: one frame up
 * to 3.10, a frame and the Python functions it called since 3.11 (which
 * calls Python from Python without recursing in C), up to the frame the
 * interpreter marked as the call's entry. So the native stack's evaluation
 * loop frames, innermost first, meet the groups innermost first, and each
 * is replaced by its group:
 *
 *   native   rangeiter_next <- _PyEval_EvalFrameDefault <- PyObject_Call
 *            <- _PyEval_EvalFrameDefault <- ... (cut: 8 KiB of stack)
 *   python   [frequencies <- test_frequencies] [pytest_pyfunc_call <- ...
 *            <- <module>]
 *   sample   rangeiter_next <- frequencies <- test_frequencies
 *            <- PyObject_Call <- pytest_pyfunc_call <- ... <- <module>
 *
 * The native stack is often cut before its root (a pytest stack is deep
 * and the copied stack a few KiB): the groups left over go on at its root
 * end, so the Python view stays whole and the sample is not truncated any
 * more. When the native stack is whole but the counts differ (under perf
 * the thread ran on for some microseconds before its stack was read, and
 * may have entered or left a C-level call), the groups are matched from
 * the root instead, where the two agree. 3.12+'s perf-map trampolines
 * ("py::name:file", one per C-level call) say what the Python frames say,
 * with less: they are dropped from samples that got Python frames, and so
 * are the interpreter's own C functions (the python executable's and
 * libpython's: how it runs the code, not which code it runs), as py-spy
 * does, so a Python function's own work is its self cost. C libraries and
 * extension modules it calls, and the kernel, stay.
 *
 * Python functions are named module.qualname ("toolz.itertoolz.
 * frequencies"), with their file, first line, and the line each frame was
 * at, under one "[python]" mapping.
 */

#include "attribute_int.h"
#include "testflame/python.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PY 512

typedef struct {
	uint32_t tid, pid;
	uint64_t time;
	bool live;
	bool cut;                  /* not the whole Python stack */
	TF_VEC(uint32_t) frames;   /* (code, line | entry) pairs */
} pending;

typedef struct {
	uint32_t code, line;
	uint32_t loc;
} loc_entry;

enum { KIND_UNKNOWN, KIND_EVAL, KIND_TRAMPOLINE, KIND_INTERP, KIND_OTHER };

struct tf_pyframes {
	tf_profile *p;
	uint32_t mapping;
	tf_pymodcache *mods;
	TF_VEC(uint32_t) code_fn;  /* code id -> function index + 1 */
	TF_VEC(loc_entry) locs;
	tf_htab loc_index;
	TF_VEC(uint8_t) kind;      /* per profile location: KIND_* */
	TF_VEC(pending) pend;
	tf_htab pend_index;
	uint32_t out[MAX_PY * 2 + 1024];
	/* what happened */
	uint64_t spliced;          /* samples given Python frames */
	uint64_t completed;        /* cut native stacks the Python frames completed */
	uint64_t realigned;        /* whole native stacks matched from the root */
	uint64_t unmatched;        /* stacks read for no sample */
	uint64_t partial, late;    /* reads that stopped early; read > 1 ms after */
	uint64_t delay_sum;
};

tf_pyframes *tf_pyframes_new(tf_profile *p)
{
	tf_pyframes *f = tf_xcalloc(1, sizeof(*f));

	f->p = p;
	f->mods = tf_pymodcache_new();
	f->mapping = UINT32_MAX; /* made at the first Python frame */
	return f;
}

void tf_pyframes_free(tf_pyframes *f)
{
	if (!f)
		return;
	tf_pymodcache_free(f->mods);
	tf_vec_free(&f->code_fn);
	tf_vec_free(&f->locs);
	tf_htab_free(&f->loc_index);
	tf_vec_free(&f->kind);
	for (size_t i = 0; i < f->pend.n; i++)
		tf_vec_free(&f->pend.v[i].frames);
	tf_vec_free(&f->pend);
	tf_htab_free(&f->pend_index);
	free(f);
}

static bool pend_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_pyframes *f = ctx;
	return f->pend.v[idx].tid == *(const uint32_t *)key;
}

static bool loc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_pyframes *f = ctx;
	const loc_entry *a = &f->locs.v[idx], *b = key;
	return a->code == b->code && a->line == b->line;
}

static void on_code(tf_pyframes *f, const tf_rec_event *ev)
{
	tf_buf name = TF_BUF_INIT, qual = TF_BUF_INIT;
	const char *file = ev->pycode.file;

	tf_py_module_name(&name, f->mods, file);
	if (ev->pycode.qualified || strcmp(ev->pycode.name, "<module>") == 0 ||
	    !tf_py_qualname_from_source(&qual, f->mods, file, ev->pycode.name,
					ev->pycode.firstlineno))
		tf_buf_puts(&qual, ev->pycode.name);
	if (name.len)
		tf_buf_putc(&name, '.');
	tf_buf_puts(&name, qual.ptr);
	uint32_t fn = tf_profile_add_function(f->p, tf_profile_intern(f->p, name.ptr),
					      tf_profile_intern(f->p, qual.ptr),
					      tf_profile_intern(f->p, file), ev->pycode.firstlineno);
	while (f->code_fn.n <= ev->pycode.id)
		tf_vec_push(&f->code_fn, 0);
	f->code_fn.v[ev->pycode.id] = fn + 1;
	tf_buf_free(&name);
	tf_buf_free(&qual);
}

static void on_stack(tf_pyframes *f, const tf_rec_event *ev)
{
	uint32_t tid = ev->tid;
	uint32_t i = tf_htab_find(&f->pend_index, tf_hash_u64(tid), pend_eq, f, &tid);

	if (i == TF_HTAB_NONE) {
		pending pe = { 0 };
		pe.tid = tid;
		tf_vec_push(&f->pend, pe);
		i = (uint32_t)f->pend.n - 1;
		tf_htab_insert(&f->pend_index, tf_hash_u64(tid), i);
	}
	pending *pe = &f->pend.v[i];
	if (pe->live)
		f->unmatched++;
	pe->pid = ev->pid;
	pe->time = ev->time;
	pe->live = true;
	pe->cut = ev->pystack.cut || ev->pystack.partial || ev->pystack.nframes > MAX_PY;
	pe->frames.n = 0;
	size_t n = TF_MIN((size_t)ev->pystack.nframes, (size_t)MAX_PY);
	tf_vec_reserve(&pe->frames, 2 * n);
	memcpy(pe->frames.v, ev->pystack.frames, 2 * n * sizeof(uint32_t));
	pe->frames.n = 2 * n;
	if (ev->pystack.partial)
		f->partial++;
	if (ev->pystack.delay_ns > 1000000)
		f->late++;
	f->delay_sum += ev->pystack.delay_ns;
}

void tf_pyframes_event(tf_pyframes *f, const tf_rec_event *ev)
{
	if (ev->type == TF_REC_PYCODE)
		on_code(f, ev);
	else if (ev->type == TF_REC_PYSTACK)
		on_stack(f, ev);
}

static bool is_eval_name(const char *s)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";
	size_t n = sizeof(eval) - 1;
	return strncmp(s, eval, n) == 0 && (s[n] == '\0' || s[n] == '.');
}

static uint8_t kind_of(tf_pyframes *f, uint32_t loc)
{
	const tf_profile *p = f->p;

	while (f->kind.n <= loc)
		tf_vec_push(&f->kind, KIND_UNKNOWN);
	if (f->kind.v[loc] == KIND_UNKNOWN) {
		const tf_location *l = &p->locations.v[loc];
		const char *module = l->mapping != TF_NO_MAPPING
					     ? tf_profile_str(p, p->mappings.v[l->mapping].filename) : "";
		uint8_t k = KIND_OTHER;
		for (uint32_t j = 0; j < l->nlines && k == KIND_OTHER; j++) {
			const tf_function *fn = &p->functions.v[p->lines.v[l->lines_off + j].function];
			if (is_eval_name(tf_profile_str(p, fn->name)))
				k = KIND_EVAL;
			else if (strcmp(module, "[jit]") == 0 && tf_pyframes_is_python(p, fn - p->functions.v))
				k = KIND_TRAMPOLINE;
		}
		if (k == KIND_OTHER && module[0] == '/' && tf_pybin_candidate(module))
			k = KIND_INTERP;
		f->kind.v[loc] = k;
	}
	return f->kind.v[loc];
}

static uint32_t python_loc(tf_pyframes *f, uint32_t code, uint32_t line)
{
	loc_entry k = { code, line, 0 };
	uint64_t h = tf_hash_combine(tf_hash_u64(code), line);
	uint32_t i = tf_htab_find(&f->loc_index, h, loc_eq, f, &k);

	if (i != TF_HTAB_NONE)
		return f->locs.v[i].loc;
	if (f->mapping == UINT32_MAX) {
		tf_mapping m = { 0 };
		m.filename = tf_profile_intern(f->p, "[python]");
		m.build_id = tf_profile_intern(f->p, "");
		m.flags = TF_MAPPING_HAS_FUNCTIONS | TF_MAPPING_HAS_FILENAMES |
			  TF_MAPPING_HAS_LINE_NUMBERS;
		f->mapping = tf_profile_add_mapping(f->p, &m);
	}
	uint32_t fn;
	if (code < f->code_fn.n && f->code_fn.v[code]) {
		fn = f->code_fn.v[code] - 1;
	} else {
		/* never announced (cannot happen with a well-formed spool) */
		fn = tf_profile_function(f->p, "[python]", "", 0);
	}
	tf_line ln = { fn, (int64_t)line, 0 };
	k.loc = tf_profile_add_location(f->p, f->mapping, 0, &ln, 1);
	tf_vec_push(&f->locs, k);
	tf_htab_insert(&f->loc_index, h, (uint32_t)f->locs.n - 1);
	return k.loc;
}

/* Append the Python frames of groups [g0, g1) to f->out at *o. */
static void put_groups(tf_pyframes *f, const pending *pe, const uint32_t *gstart, size_t g0,
		       size_t g1, size_t *o, size_t cap)
{
	for (size_t i = gstart[g0]; i < gstart[g1] && *o < cap; i++) {
		uint32_t code = pe->frames.v[2 * i], line = pe->frames.v[2 * i + 1] & ~TF_PYFRAME_ENTRY;
		f->out[(*o)++] = python_loc(f, code, line);
	}
}

bool tf_pyframes_splice(tf_pyframes *f, const tf_rec_event *ev, tf_pysplice *s)
{
	uint32_t *locs = s->locs;
	size_t user = s->user, n = s->n;
	uint32_t tid = ev->tid;
	uint32_t pi = tf_htab_find(&f->pend_index, tf_hash_u64(tid), pend_eq, f, &tid);
	pending *pe;
	uint32_t gstart[MAX_PY + 1];
	size_t ng = 0, nf, ne = 0, o = 0;
	size_t cap = TF_MIN(s->max, TF_ARRAY_SIZE(f->out));

	if (pi == TF_HTAB_NONE)
		return false;
	pe = &f->pend.v[pi];
	if (!pe->live || pe->time != ev->time || pe->pid != ev->pid)
		return false;
	pe->live = false;
	nf = pe->frames.n / 2;
	if (!nf)
		return false;

	/* groups: each ends at an entry frame */
	gstart[0] = 0;
	for (size_t i = 0; i < nf; i++)
		if ((pe->frames.v[2 * i + 1] & TF_PYFRAME_ENTRY) || i + 1 == nf)
			gstart[++ng] = (uint32_t)(i + 1);
	for (size_t i = user; i < n; i++)
		if (kind_of(f, locs[i]) == KIND_EVAL)
			ne++;

	/* which groups each evaluation loop frame (innermost first) gets: from
	 * the leaf, or from the root when the native stack is whole */
	size_t shift = 0, skip = 0, first_extra = 0;
	bool from_root = !s->truncated && ne && ng != ne;
	if (from_root) {
		if (ng > ne)
			first_extra = ng - ne;   /* the innermost gets these too */
		else
			skip = ne - ng;          /* the innermost keep their native frame */
		shift = first_extra;
		f->realigned++;
	}

	for (size_t i = 0; i < user && o < cap; i++)
		f->out[o++] = locs[i];
	size_t e = 0, used = 0;
	for (size_t i = user; i < n && o < cap; i++) {
		uint8_t k = kind_of(f, locs[i]);
		if (k == KIND_TRAMPOLINE || k == KIND_INTERP) {
			s->dropped++;
			s->dropped_unresolved += s->unresolved[i];
			continue;
		}
		if (k != KIND_EVAL) {
			f->out[o++] = locs[i];
			continue;
		}
		size_t j = e++;
		if (j < skip) {
			f->out[o++] = locs[i];
			continue;
		}
		size_t g0, g1;
		if (from_root) {
			g0 = j == skip ? 0 : j - skip + shift;
			g1 = j - skip + shift + 1;
		} else {
			g0 = j;
			g1 = j + 1;
		}
		if (g0 >= ng) {
			f->out[o++] = locs[i];
			continue;
		}
		g1 = TF_MIN(g1, ng);
		put_groups(f, pe, gstart, g0, g1, &o, cap);
		s->dropped++;
		s->dropped_unresolved += s->unresolved[i];
		used = g1;
	}
	if (used < ng)
		/* the rest of the Python stack, beyond where the native one ends */
		put_groups(f, pe, gstart, used, ng, &o, cap);
	/* below the interpreter's outermost frame there is only its start
	 * (main, a thread's start routine): a whole Python stack that took
	 * the place of every evaluation loop frame leaves nothing out */
	if (s->truncated && e <= ng && !pe->cut && o < cap) {
		s->truncated = false;
		f->completed++;
	}
	if (o == cap && n + nf > cap)
		s->truncated = true;
	memcpy(locs, f->out, o * sizeof(uint32_t));
	s->n = o;
	f->spliced++;
	return true;
}

void tf_pyframes_write_meta(tf_pyframes *f, const tf_record_info *ri)
{
	char buf[64];
	struct {
		const char *key;
		uint64_t v;
	} items[] = {
		{ "python_stacks", f->spliced },
		{ "python_unread", ri->py_unread + f->unmatched },
		{ "python_completed", f->completed },
		{ "python_realigned", f->realigned },
		{ "python_partial", f->partial },
		{ "python_late", f->late },
	};

	if (!ri->py_stacks && !ri->py_unread && !ri->py_versions[0])
		return;
	for (size_t i = 0; i < TF_ARRAY_SIZE(items); i++) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)items[i].v);
		tf_profile_set_meta(f->p, items[i].key, buf);
	}
	if (ri->py_stacks) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(f->delay_sum / ri->py_stacks));
		tf_profile_set_meta(f->p, "python_read_delay_ns", buf);
	}
	if (ri->py_versions[0])
		tf_profile_set_meta(f->p, "python", ri->py_versions);
}

bool tf_pyframes_is_python(const tf_profile *p, uint32_t fn)
{
	const char *file = tf_profile_str(p, p->functions.v[fn].filename);
	size_t n = strlen(file);
	return n > 3 && strcmp(file + n - 3, ".py") == 0;
}

/* ---- tests named by Python frames (frames.c's "pytest" preset) -------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int tf_pytest_anchor(const tf_profile *p, uint32_t fn)
{
	const tf_function *f = &p->functions.v[fn];
	const char *name = tf_profile_str(p, f->name), *file = tf_profile_str(p, f->filename);

	if (ends_with(name, "pytest_pyfunc_call") && ends_with(file, "/_pytest/python.py"))
		return TF_PYTEST_ANCHOR_PYTEST;
	/* unittest calls the test method from _callTestMethod (3.8+), from
	 * TestCase.run itself before */
	if ((ends_with(name, "TestCase._callTestMethod") || ends_with(name, "TestCase.run")) &&
	    ends_with(file, "/unittest/case.py"))
		return TF_PYTEST_ANCHOR_UNITTEST;
	return 0;
}

bool tf_pytest_runner_frame(const tf_profile *p, uint32_t fn)
{
	return strstr(tf_profile_str(p, p->functions.v[fn].filename), "/_pytest/") != NULL;
}

typedef struct {
	char *dir, *root;
} root_entry;

struct tf_pytest_names {
	TF_VEC(root_entry) roots;
};

tf_pytest_names *tf_pytest_names_new(void)
{
	return tf_xcalloc(1, sizeof(tf_pytest_names));
}

void tf_pytest_names_free(tf_pytest_names *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->roots.n; i++) {
		free(c->roots.v[i].dir);
		free(c->roots.v[i].root);
	}
	tf_vec_free(&c->roots);
	free(c);
}

/* Whether DIR/name exists and (when `section` is given) holds it. */
static bool config_in(const char *dir, const char *name, const char *section)
{
	char *path = tf_xasprintf("%s/%s", dir, name);
	tf_buf b = TF_BUF_INIT;
	bool yes = false;

	if (tf_file_read(&b, path) == 0)
		yes = !section || strstr(b.ptr, section) != NULL;
	else
		tf_error_clear();
	tf_buf_free(&b);
	free(path);
	return yes;
}

/*
 * The rootdir pytest picks for tests in `dir` (its node ids are relative to
 * it): the nearest directory with its configuration (pytest.ini, or
 * pytest's section of pyproject.toml, tox.ini or setup.cfg), else the
 * nearest with a setup.py. pytest starts from its arguments rather than
 * from each test file, which gives the same directory in the usual
 * layouts. NULL when neither is found.
 */
static const char *rootdir_of(tf_pytest_names *c, const char *dir)
{
	for (size_t i = 0; i < c->roots.n; i++)
		if (strcmp(c->roots.v[i].dir, dir) == 0)
			return c->roots.v[i].root;
	char *d = tf_xstrdup(dir), *root = NULL;
	for (int pass = 0; pass < 2 && !root; pass++) {
		char *cur = tf_xstrdup(d);
		for (;;) {
			bool hit = pass == 0 ? config_in(cur, "pytest.ini", NULL) ||
						       config_in(cur, "pyproject.toml", "[tool.pytest.ini_options]") ||
						       config_in(cur, "tox.ini", "[pytest]") ||
						       config_in(cur, "setup.cfg", "[tool:pytest]")
					     : config_in(cur, "setup.py", NULL);
			if (hit) {
				root = tf_xstrdup(cur);
				break;
			}
			char *slash = strrchr(cur, '/');
			if (!slash || slash == cur)
				break;
			*slash = '\0';
		}
		free(cur);
	}
	root_entry e = { d, root };
	tf_vec_push(&c->roots, e);
	return root;
}

tf_strid tf_pytest_test_name(tf_pytest_names *c, tf_profile *p, uint32_t fn, bool node_id,
			     const char *cwd)
{
	const tf_function *f = &p->functions.v[fn];
	const char *file = tf_profile_str(p, f->filename);
	const char *qual = tf_profile_str(p, f->system_name);
	tf_buf b = TF_BUF_INIT;
	tf_strid id;

	if (!node_id || file[0] != '/') {
		/* unittest's own id: module.Class.method */
		return f->name;
	}
	char *dir = tf_xstrdup(file);
	*strrchr(dir, '/') = '\0';
	const char *root = dir[0] ? rootdir_of(c, dir) : NULL;
	char *common = NULL;
	if (!root && cwd && cwd[0] == '/') {
		/* pytest's fallback: the common ancestor of where it runs and
		 * what it collects */
		size_t k = 0, last = 0;
		while (cwd[k] && cwd[k] == file[k]) {
			if (cwd[k] == '/')
				last = k;
			k++;
		}
		if (!cwd[k] && file[k] == '/')
			last = k;
		if (last > 0) {
			common = tf_xstrndup(file, last);
			root = common;
		}
	}
	size_t rl = root ? strlen(root) : 0;
	if (root && strncmp(file, root, rl) == 0 && file[rl] == '/')
		tf_buf_puts(&b, file + rl + 1);
	else
		tf_buf_puts(&b, file);
	free(dir);
	free(common);
	/* pytest names a method Class::method */
	tf_buf_puts(&b, "::");
	for (const char *q = qual; *q; q++) {
		if (*q == '.')
			tf_buf_puts(&b, "::");
		else
			tf_buf_putc(&b, *q);
	}
	id = tf_profile_intern_len(p, b.ptr, b.len);
	tf_buf_free(&b);
	return id;
}

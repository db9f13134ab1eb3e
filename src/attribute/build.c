/*
 * build.c - tf_attribute_build(): the recording, replayed in time order,
 * becomes a labelled profile.
 *
 * Per sample: pick the user stack (the kernel's frame-pointer chain, or a
 * DWARF unwind of the copied stack when the code at the sample's ip keeps no
 * frame pointers, or always, as --call-graph says), resolve each address
 * once through the symbolizer (locations are cached by the symbolizer's
 * dense ids, so the hot path is an array index), decide the test, and add
 * the sample with its labels. Every loss is counted: unresolved frames,
 * truncated stacks, lost and throttled samples all land in the metadata.
 */
#include "attribute_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#define MAX_FRAMES 512
/* the most sample types a run file has: samples, the event; off-cpu and
 * wall (the time threads wait); alloc_objects, alloc_space and inuse_space
 * (memory) */
#define MAX_COLUMNS 7

/* What building one sample's stack counted (build_stack). */
typedef struct {
	size_t frames, unresolved, nunres;
	bool truncated;
} stack_counts;

typedef struct {
	tf_profile *p;
	tf_symbolizer *sym;
	tf_attributor *att;
	tf_pyframes *py;                  /* Python frames of CPython processes */
	const tf_attribute_opts *opts;
	tf_attribute_stats *st;
	TF_VEC(uint32_t) loc_of_symloc;   /* symloc id -> location + 1 */
	tf_strtab modules;                /* module name -> mapping via map_of_module */
	TF_VEC(uint32_t) map_of_module;
	tf_strid k_test, k_process, k_pid, k_tid, k_wait;
	tf_waits *waits;                  /* off-CPU intervals, when recorded */
	size_t col_offcpu, col_wall;      /* their value columns; 0: none */
	bool time_event;                  /* the event column is CPU time */
	int64_t period_sum;               /* of the CPU's samples */
	uint64_t offcpu_period_max;       /* the most switch-outs a stack stood for */
	/* memory's sample types (0: the run did not measure it) */
	size_t col_objects, col_space, col_inuse;
	stack_counts last;                /* the last stack built's */
	TF_VEC(tf_line) lines;
	TF_VEC(uint32_t) offcpu_names;    /* string ids of "[off-cpu] NAME" ... */
	TF_VEC(uint32_t) offcpu_locs;     /* ... and their locations */
	uint64_t last_time;
	uint64_t ips[MAX_FRAMES];
	uint32_t locs[MAX_FRAMES];
	bool unresolved[MAX_FRAMES];      /* per locs[i]: no symbol (for pyframes) */
	uint32_t unres_module[MAX_FRAMES]; /* this sample's frames without a symbol: modules */
	TF_VEC(uint64_t) missing;         /* module id -> frames without a symbol in tests */
} builder;

static uint32_t mapping_for(builder *b, const tf_symloc *sl)
{
	const char *mod = sl->module ? sl->module : "";
	uint32_t id = tf_strtab_intern(&b->modules, mod, strlen(mod));
	while (b->map_of_module.n <= id)
		tf_vec_push(&b->map_of_module, TF_NO_MAPPING);
	if (b->map_of_module.v[id] == TF_NO_MAPPING) {
		tf_mapping m = { 0 };
		m.memory_start = sl->module_start;
		m.memory_limit = sl->module_end;
		m.filename = tf_profile_intern(b->p, mod);
		m.build_id = tf_profile_intern(b->p, sl->build_id ? sl->build_id : "");
		m.flags = TF_MAPPING_HAS_FUNCTIONS | TF_MAPPING_HAS_FILENAMES |
			  TF_MAPPING_HAS_LINE_NUMBERS | TF_MAPPING_HAS_INLINE_FRAMES;
		tf_vec_push(&b->p->mappings, m);
		b->map_of_module.v[id] = (uint32_t)b->p->mappings.n - 1;
	}
	return b->map_of_module.v[id];
}

static uint32_t location_for(builder *b, const tf_symloc *sl)
{
	if (sl->id < b->loc_of_symloc.n && b->loc_of_symloc.v[sl->id])
		return b->loc_of_symloc.v[sl->id] - 1;
	b->lines.n = 0;
	for (uint32_t i = 0; i < sl->nframes; i++) {
		const tf_frame *f = &sl->frames[i];
		tf_strid name = tf_profile_intern(b->p, f->function);
		tf_strid sys = f->system_name ? tf_profile_intern(b->p, f->system_name) : name;
		tf_strid file = tf_profile_intern(b->p, f->file ? f->file : "");
		tf_line ln = { tf_profile_add_function(b->p, name, sys, file, f->start_line),
			       f->line, 0 };
		tf_vec_push(&b->lines, ln);
	}
	uint32_t loc = tf_profile_add_location(b->p, mapping_for(b, sl), sl->module_addr,
					       b->lines.v, (uint32_t)b->lines.n);
	while (b->loc_of_symloc.n <= sl->id)
		tf_vec_push(&b->loc_of_symloc, 0);
	b->loc_of_symloc.v[sl->id] = loc + 1;
	return loc;
}

/* The leaf frame of an off-CPU sample (--event wall): what the thread
 * waits in, as a function of no binary, "[off-cpu] clock_nanosleep". */
static uint32_t offcpu_location(builder *b, const char *what)
{
	char *label = tf_xasprintf("[off-cpu] %s", what);
	tf_strid name = tf_profile_intern(b->p, label);
	uint32_t loc;

	free(label);
	for (size_t i = 0; i < b->offcpu_names.n; i++)
		if (b->offcpu_names.v[i] == name)
			return b->offcpu_locs.v[i];
	tf_line ln = { tf_profile_add_function(b->p, name, name, 0, 0), 0, 0 };
	loc = tf_profile_add_location(b->p, TF_NO_MAPPING, 0, &ln, 1);
	tf_vec_push(&b->offcpu_names, name);
	tf_vec_push(&b->offcpu_locs, loc);
	return loc;
}

/*
 * The DWARF unwind of a short stack copy (an off-CPU sample's, perf.c)
 * stops where the copy ends; the kernel's frame-pointer chain goes on to
 * the outermost frame but skips the caller of a frameless function (libc's
 * system call wrappers among them). The two joined: the unwind's frames,
 * then the chain's after the last address they share; with none shared,
 * the chain's after its first (the caller of the frameless wrapper kept
 * its frame pointer, which the chain starts from: the unwind's frames
 * reach that caller, the chain goes on from its caller). Returns the
 * frames in ips.
 */
static size_t join_chain(uint64_t *ips, size_t got, size_t max, const uint64_t *chain,
			 size_t nchain, bool *cut)
{
	size_t j = got - 1, k = 0;
	bool shared = false;

	for (size_t kk = nchain; kk-- > 1 && !shared;)
		for (size_t jj = got; jj-- > 1 && !shared;)
			if (ips[jj] == chain[kk]) {
				j = jj;
				k = kk;
				shared = true;
			}
	size_t n = j + 1;
	for (size_t i = k + 1; i < nchain && n < max; i++)
		ips[n++] = chain[i];
	*cut = n == max && nchain - k - 1 > max - j - 1;
	return n;
}

/*
 * Whether a stack's outermost frame is where every process or thread
 * starts: such a stack is whole, whatever the unwinder said (the entry
 * points of the program and of ld.so, and of threads, carry no CFI rule
 * that ends the stack, so unwinding them looks cut short).
 */
static bool is_entry(const char *fn)
{
	static const char *const entries[] = {
		"_start", "_dl_start_user", "__libc_start_main", "__libc_start_call_main",
		"start_thread", "__clone", "__clone3", "clone3", "thread_start",
	};
	for (size_t i = 0; fn && i < TF_ARRAY_SIZE(entries); i++)
		if (strcmp(fn, entries[i]) == 0)
			return true;
	return false;
}

/* A frame without a symbol: its module, for naming the tests' worst. */
static void note_unresolved(builder *b, const tf_symloc *sl, size_t *nunres)
{
	const char *mod = sl->module ? sl->module : "";
	uint32_t id = tf_strtab_intern(&b->modules, mod, strlen(mod));
	while (b->missing.n <= id)
		tf_vec_push(&b->missing, 0);
	b->unres_module[(*nunres)++] = id;
}

/* The modules with the most frames without a symbol in the tests: taken
 * out of the counts one by one, most first. */
static void name_missing(builder *b)
{
	for (size_t k = 0; k < TF_ARRAY_SIZE(b->st->missing_symbols); k++) {
		size_t best = 0;
		for (size_t i = 1; i < b->missing.n; i++)
			if (b->missing.v[i] > b->missing.v[best])
				best = i;
		b->st->missing_symbols[k][0] = '\0';
		if (!b->missing.n || !b->missing.v[best])
			break;
		b->missing.v[best] = 0;
		const char *mod = b->modules.strs.v[best], *slash = strrchr(mod, '/');
		snprintf(b->st->missing_symbols[k], sizeof(b->st->missing_symbols[k]), "%s",
			 slash ? slash + 1 : *mod ? mod : "(unknown)");
	}
}

/* A sample's stack into b->locs, leaf first: what it waits in (ptrace's
 * off-CPU samples), kernel frames, then user frames; with `python`,
 * Python's spliced in. Returns its depth. */
static size_t build_stack(builder *b, const tf_rec_event *ev, bool python)
{
	const uint64_t *user = ev->sample.user_ips;
	size_t nuser = ev->sample.nuser, n = 0, nframes = 0, nunres = 0, unresolved;
	const char *outer = NULL;         /* the outermost user frame's function */
	size_t maxd = TF_MIN((size_t)b->opts->max_depth, (size_t)MAX_FRAMES);
	bool truncated = ev->sample.user_truncated, dwarf = false;

	/*
	 * With a copied stack, unwind by DWARF CFI: frame pointers skip the
	 * caller of every function that keeps no frame (leaf functions, which
	 * gcc builds frameless even with -fno-omit-frame-pointer, and all of
	 * Debian's libc), so a profile's hottest function would lose its
	 * caller. The kernel's chain stays the fallback in auto mode for code
	 * without CFI (JIT code), when it gets further.
	 */
	if (ev->sample.stack && ev->sample.regs && nuser > 0)
		dwarf = b->opts->callgraph != TF_CALLGRAPH_FP;
	if (dwarf) {
		bool cut = false;
		size_t got = tf_symbolizer_unwind_ex(b->sym, ev->pid, ev->time, ev->sample.regs,
						     ev->sample.regs_mask, ev->sample.stack,
						     ev->sample.stack_size, b->ips, maxd, &cut);
		if (cut && got > 1 && nuser > 1 && ev->type == TF_REC_OFFCPU)
			got = join_chain(b->ips, got, maxd, user, nuser, &cut);
		if (b->opts->callgraph == TF_CALLGRAPH_DWARF || got >= nuser || got > 2) {
			user = b->ips;
			nuser = got;
			truncated = cut;
			b->st->dwarf_stacks++;
		} else {
			dwarf = false;
		}
	}
	if (!dwarf && nuser)
		b->st->fp_stacks++;

	if (ev->sample.offcpu)
		b->locs[n++] = offcpu_location(b, ev->sample.offcpu);
	for (uint32_t i = 0; i < ev->sample.nkernel && n < maxd; i++) {
		uint64_t a = ev->sample.kernel_ips[i];
		const tf_symloc *sl = tf_symbolizer_lookup(b->sym, ev->pid, ev->time,
							   i ? a - 1 : a, true);
		b->locs[n++] = location_for(b, sl);
		nframes++;
		if (!sl->resolved)
			note_unresolved(b, sl, &nunres);
	}
	size_t user_start = n;
	for (size_t i = 0; i < nuser && n < maxd; i++) {
		uint64_t a = user[i];
		/* every frame but the sample's own ip is a return address */
		bool leaf = i == 0 && ev->sample.nkernel == 0;
		if (!a)
			continue;
		const tf_symloc *sl = tf_symbolizer_lookup(b->sym, ev->pid, ev->time,
							   leaf ? a : a - 1, false);
		b->unresolved[n] = !sl->resolved;
		b->locs[n++] = location_for(b, sl);
		outer = sl->nframes ? sl->frames[sl->nframes - 1].function : NULL;
		nframes++;
		if (!sl->resolved)
			note_unresolved(b, sl, &nunres);
	}
	if (n == maxd && (ev->sample.nkernel + nuser) > maxd)
		truncated = true;
	else if (truncated && is_entry(outer))
		truncated = false;
	unresolved = nunres;
	tf_pysplice ps = { b->locs, b->unresolved, user_start, n, maxd, truncated, 0, 0 };
	if (python && tf_pyframes_splice(b->py, ev, &ps)) {
		n = ps.n;
		truncated = ps.truncated;
		nframes -= ps.dropped;
		unresolved = nunres - ps.dropped_unresolved;
	}
	b->st->frames += nframes;
	b->st->unresolved += unresolved;
	/* an off-CPU stack's copy is short on purpose: its cuts are its own */
	if (truncated && ev->type == TF_REC_OFFCPU)
		b->st->offcpu_truncated++;
	else if (truncated)
		b->st->truncated++;
	b->last = (stack_counts){ nframes, unresolved, nunres, truncated };
	return n;
}

/* Values of a sample (MAX_COLUMNS of them, those of other measures 0):
 * its count, its event value, and where the run has them its off-CPU time
 * and its wall time (CPU plus off-CPU). */
static void put_values(builder *b, int64_t *v, int64_t count, int64_t event, int64_t cpu,
		       int64_t offcpu)
{
	memset(v, 0, MAX_COLUMNS * sizeof(*v));
	v[0] = count;
	v[1] = event;
	if (b->col_offcpu)
		v[b->col_offcpu] = offcpu;
	if (b->col_wall)
		v[b->col_wall] = cpu + offcpu;
}

/* The stack just built among the run's counts of frames: the harness's
 * or a build step's outside the tests, else its frames without a symbol
 * counted by module (an off-CPU stack's cuts are counted apart). */
static void count_frames(builder *b, int source, bool offcpu)
{
	if (source == SRC_OUTSIDE || source == SRC_BUILD) {
		b->st->frames_outside += b->last.frames;
		b->st->unresolved_outside += b->last.unresolved;
		if (!offcpu)
			b->st->truncated_outside += b->last.truncated;
	} else {
		for (size_t i = 0; i < b->last.nunres; i++)
			b->missing.v[b->unres_module[i]]++;
	}
}

/* A sample's source among the run's counts; a sample the harness or a
 * build step took counts its stack (just built) outside the tests. */
static void count_source(builder *b, int source)
{
	if (source == SRC_OUTSIDE || source == SRC_BUILD)
		b->st->samples_outside++; /* no test's profile */
	count_frames(b, source, false);
	if (source == SRC_OUTSIDE)
		source = SRC_COMMAND;
	if (source >= 0 && source < 4)
		b->st->by_source[source]++;
}

static void on_sample(builder *b, const tf_rec_event *ev)
{
	size_t n = build_stack(b, ev, true);
	int source;
	uint64_t sh = tf_profile_stack_hash(b->locs, (uint32_t)n);
	tf_strid test = tf_attributor_sample(b->att, ev, b->locs, n, (int64_t)ev->sample.period,
					     &source);
	tf_label labels[5] = {
		{ b->k_test, test, 0, 0 },
		{ b->k_process, tf_attributor_process(b->att, ev->pid), 0, 0 },
		{ b->k_pid, 0, ev->pid, 0 },
		{ b->k_tid, 0, ev->tid, 0 },
		{ b->k_wait, 0, 0, 0 },
	};
	int64_t values[MAX_COLUMNS];
	int64_t period = (int64_t)ev->sample.period;
	if (ev->sample.offcpu && b->waits) {
		/* ptrace's wall mode: a thread found waiting, for `period`; its
		 * event column is CPU time, which a waiting thread has none of */
		tf_wait_reason r = tf_waits_syscall_reason(ev->sample.offcpu);
		double apart, counted = tf_waits_sampled(b->waits, ev, test, r, (double)period,
							 &apart);
		tf_attributor_add_wait(b->att, test, counted, apart, 1);
		b->st->offcpu_waits++;
		labels[4].str = tf_profile_intern(b->p, tf_wait_name(r));
		put_values(b, values, 1, 0, 0, (int64_t)counted);
		tf_profile_add_sample_hashed(b->p, sh, b->locs, (uint32_t)n, values, labels, 5);
	} else {
		if (b->waits)
			tf_waits_running(b->waits, ev, test);
		put_values(b, values, 1, period, b->time_event ? period : 0, 0);
		tf_profile_add_sample_hashed(b->p, sh, b->locs, (uint32_t)n, values, labels, 4);
		b->period_sum += period;
	}
	count_source(b, source);
	b->st->samples++;
}

/* A thread left its CPU: the stack it waits with, until it comes back. */
static void on_offcpu(builder *b, const tf_rec_event *ev)
{
	/* no Python stack was read at a switch-out (pyread.c reads them at
	 * the CPU's samples): the next sample's must not land here */
	size_t n = build_stack(b, ev, false);
	size_t nkernel = TF_MIN((size_t)ev->sample.nkernel, n);
	tf_wait_reason r = tf_waits_reason(b->p, b->locs, n, nkernel);
	bool rwsem = tf_waits_on_rwsem(b->p, b->locs, nkernel);
	int source;

	/* leaf first: why it waits, as the ptrace sampler's samples say it */
	if (n == MAX_FRAMES)
		n--;
	memmove(b->locs + 1, b->locs, n * sizeof(*b->locs));
	b->locs[0] = offcpu_location(b, tf_wait_name(r));
	n++;
	tf_strid test = tf_attributor_test(b->att, ev, b->locs, n, &source);
	count_frames(b, source, true);
	tf_attributor_switch_sampled(b->att, ev->tid, ev->time);
	tf_waits_out(b->waits, ev, test, tf_attributor_process(b->att, ev->pid), r, rwsem,
		     b->locs, n);
	b->st->offcpu_samples++;
	if (ev->sample.period > b->offcpu_period_max)
		b->offcpu_period_max = ev->sample.period;
}

/* An interval done: its counted time a sample of the test, its time apart
 * in the test's metadata. */
static void on_wait(void *ctx, const tf_wait_done *d)
{
	builder *b = ctx;
	tf_attributor_add_wait(b->att, d->test, d->counted, d->apart, d->weight);
	/* what the machine's state decides: the page cache, a shared lock */
	if (d->reason == TF_WAIT_PAGEIN || d->reason == TF_WAIT_LOAD)
		tf_attributor_add_pagein(b->att, d->test, d->counted);
	int64_t ns = (int64_t)(d->counted + 0.5);
	if (ns <= 0 || d->n == 0)
		return;
	tf_label labels[5] = {
		{ b->k_test, d->test, 0, 0 },
		{ b->k_process, d->process, 0, 0 },
		{ b->k_pid, 0, d->pid, 0 },
		{ b->k_tid, 0, d->tid, 0 },
		{ b->k_wait, tf_profile_intern(b->p, tf_wait_name(d->reason)), 0, 0 },
	};
	int64_t values[MAX_COLUMNS];
	put_values(b, values, 0, 0, 0, ns);
	tf_profile_add_sample(b->p, d->locs, (uint32_t)d->n, values, labels, 5);
}

/*
 * A sampled allocation: its stack, its test, and what it stands for, as
 * pprof scales a heap sample: a block of s bytes drawn with probability
 * 1 - exp(-s / rate) stands for s / (1 - exp(-s / rate)) bytes (unbiased),
 * and for that divided by s allocations. It is live (inuse_space) until
 * its free is seen while its test runs.
 */
static void on_alloc(builder *b, const tf_rec_event *ev)
{
	const tf_alloc_info *al = ev->sample.alloc;
	size_t n = build_stack(b, ev, false);
	uint64_t sh = tf_profile_stack_hash(b->locs, (uint32_t)n);
	tf_strid test = tf_attributor_alloc(b->att, ev, b->locs, n);
	count_frames(b, SRC_COMMAND, false);
	double size = al->size ? (double)al->size : 1;
	double rate = al->rate ? (double)al->rate : 1;
	double weight = size / -expm1(-size / rate);
	tf_label labels[4] = {
		{ b->k_test, test, 0, 0 },
		{ b->k_process, tf_attributor_process(b->att, ev->pid), 0, 0 },
		{ b->k_pid, 0, ev->pid, 0 },
		{ b->k_tid, 0, ev->tid, 0 },
	};
	int64_t values[MAX_COLUMNS] = { 0 };
	int64_t bytes = llround(weight);
	values[b->col_objects] = llround(weight / size);
	values[b->col_space] = bytes;
	values[b->col_inuse] = bytes;
	uint32_t idx = tf_profile_add_sample_hashed(b->p, sh, b->locs, (uint32_t)n, values, labels,
						    4);
	tf_attributor_alloc_block(b->att, ev, test, (uint64_t)bytes, idx);
	b->st->alloc_samples++;
}

static void on_alloc_free(builder *b, const tf_rec_event *ev)
{
	uint32_t idx;
	uint64_t bytes;
	if (tf_attributor_alloc_free(b->att, ev, &idx, &bytes) && idx < b->p->samples.n)
		b->p->values.v[(size_t)idx * b->p->sample_types.n + b->col_inuse] -= (int64_t)bytes;
}

static int on_event(void *ctx, const tf_rec_event *ev)
{
	builder *b = ctx;
	if (ev->time > b->last_time)
		b->last_time = ev->time;
	switch (ev->type) {
	case TF_REC_SAMPLE:
		on_sample(b, ev);
		break;
	case TF_REC_OFFCPU:
		if (b->waits)
			on_offcpu(b, ev);
		break;
	case TF_REC_ALLOC:
		if (b->col_space)
			on_alloc(b, ev);
		break;
	case TF_REC_ALLOC_FREE:
		if (b->col_space)
			on_alloc_free(b, ev);
		break;
	case TF_REC_FORK:
		/* the waits ask the attributor which test started it */
		tf_symbolizer_event(b->sym, ev);
		tf_attributor_event(b->att, ev);
		if (b->waits)
			tf_waits_event(b->waits, ev);
		break;
	case TF_REC_EXIT:
		if (b->waits)
			tf_waits_event(b->waits, ev);
		/* fall through */
	case TF_REC_MMAP:
	case TF_REC_COMM:
		tf_symbolizer_event(b->sym, ev);
		tf_attributor_event(b->att, ev);
		break;
	case TF_REC_SWITCH:
		if (b->waits)
			tf_waits_event(b->waits, ev);
		tf_attributor_event(b->att, ev);
		break;
	case TF_REC_PEEK:
		if (b->waits)
			tf_waits_event(b->waits, ev);
		break;
	case TF_REC_CMDLINE:
	case TF_REC_MARKER:
	case TF_REC_PROC_EXIT:
	case TF_REC_THREAD_COST:
	case TF_REC_ALLOC_COUNT:
	case TF_REC_ALLOC_PROC:
	case TF_REC_NOTE:
	case TF_REC_RSS:
		tf_attributor_event(b->att, ev);
		break;
	case TF_REC_PYCODE:
	case TF_REC_PYSTACK:
		tf_pyframes_event(b->py, ev);
		break;
	default:
		break;
	}
	return 0;
}

void tf_attribute_opts_init(tf_attribute_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_depth = MAX_FRAMES;
}

static void meta_u64(tf_profile *p, const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	tf_profile_set_meta(p, key, buf);
}

static void write_meta(builder *b, const tf_record_info *ri)
{
	tf_profile *p = b->p;
	char buf[128];
	struct utsname un;
	time_t secs = (time_t)(ri->start_realtime_ns / 1000000000ULL);
	struct tm tm;

	tf_profile_set_meta(p, "version", TF_VERSION);
	/* the commit testflame was built from, and what its numbers mean: a
	 * comparison of runs whose measure differs says so */
	if (tf_build_commit[0]) {
		snprintf(buf, sizeof(buf), "%.40s%s", tf_build_commit, tf_build_dirty ? "-dirty" : "");
		tf_profile_set_meta(p, "build", buf);
	}
	meta_u64(p, "measure", TF_MEASURE_VERSION);
	if (b->opts->command)
		tf_profile_set_meta(p, "command", b->opts->command);
	if (b->opts->suite)
		tf_profile_set_meta(p, "suite", b->opts->suite);
	tf_profile_set_meta(p, "event", tf_event_name(ri->event));
	meta_u64(p, "freq", ri->freq);
	meta_u64(p, "period", (uint64_t)p->period);
	tf_profile_set_meta(p, "sampler", tf_sampler_name(ri->sampler));
	tf_profile_set_meta(p, "rung", ri->rung);
	/* how the perf events reached the processes (perf.c) */
	if (ri->sampler == TF_SAMPLER_PERF)
		tf_profile_set_meta(p, "follow", ri->by_cgroup ? "cgroup" : "inherit");
	tf_profile_set_meta(p, "kernel", ri->kernel ? "true" : "false");
	if (b->opts->callgraph == TF_CALLGRAPH_AUTO)
		snprintf(buf, sizeof(buf), "auto fp=%llu dwarf=%llu",
			 (unsigned long long)b->st->fp_stacks,
			 (unsigned long long)b->st->dwarf_stacks);
	else
		snprintf(buf, sizeof(buf), "%s", tf_callgraph_name(b->opts->callgraph));
	tf_profile_set_meta(p, "unwinder", buf);
	meta_u64(p, "exit_status", (uint64_t)ri->exit_status);
	meta_u64(p, "samples", b->st->samples);
	meta_u64(p, "lost", ri->lost);
	meta_u64(p, "throttled", ri->throttled);
	meta_u64(p, "frames", b->st->frames);
	meta_u64(p, "unresolved", b->st->unresolved);
	meta_u64(p, "truncated", b->st->truncated);
	/* of those, outside every test: the harness's, which no test changes */
	meta_u64(p, "samples_outside", b->st->samples_outside);
	meta_u64(p, "frames_outside", b->st->frames_outside);
	meta_u64(p, "unresolved_outside", b->st->unresolved_outside);
	meta_u64(p, "truncated_outside", b->st->truncated_outside);
	meta_u64(p, "processes", b->st->processes);
	meta_u64(p, "threads", b->st->threads);
	if (ri->interrupted)
		tf_profile_set_meta(p, "interrupted", "true");
	gmtime_r(&secs, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	tf_profile_set_meta(p, "start", buf);
	meta_u64(p, "duration_ns", ri->end_ns - ri->start_ns);
	if (uname(&un) == 0)
		tf_profile_set_meta(p, "arch", un.machine);
	if (ri->markers_ignored)
		meta_u64(p, "markers_ignored", ri->markers_ignored);
	/* off-CPU: how the waits were recorded, and what stands for what */
	if (ri->offcpu) {
		tf_profile_set_meta(p, "offcpu", ri->sampler == TF_SAMPLER_PTRACE ? "sampled" : "switches");
		if (ri->sampler != TF_SAMPLER_PTRACE) {
			meta_u64(p, "offcpu_stacks", b->st->offcpu_samples);
			meta_u64(p, "offcpu_truncated", b->st->offcpu_truncated);
			meta_u64(p, "offcpu_period_max", TF_MAX(ri->offcpu_period_max, b->offcpu_period_max));
			/* waits testflame's own reads of a process caused,
			 * counted for no test (offcpu.c) */
			uint64_t n;
			double ns = b->waits ? tf_waits_peeked(b->waits, &n) : 0;
			if (b->waits && n) {
				meta_u64(p, "offcpu_recorder_waits", n);
				meta_u64(p, "offcpu_recorder_ns", (uint64_t)ns);
			}
			/* and those the cap left between two tests of a thread */
			ns = b->waits ? tf_waits_unplaced(b->waits, &n) : 0;
			if (b->waits && n) {
				meta_u64(p, "offcpu_unplaced_waits", n);
				meta_u64(p, "offcpu_unplaced_ns", (uint64_t)ns);
			}
		}
	} else if (ri->offcpu_why[0]) {
		tf_profile_set_meta(p, "offcpu", "none");
		tf_profile_set_meta(p, "offcpu_why", ri->offcpu_why);
	}
	if (b->st->helper_samples)
		meta_u64(p, "helper_samples", b->st->helper_samples);
	if (ri->memory) {
		meta_u64(p, "alloc_rate", ri->alloc_rate);
		meta_u64(p, "alloc_samples", b->st->alloc_samples);
		meta_u64(p, "alloc_processes", ri->alloc_processes);
		meta_u64(p, "alloc_pooled", ri->alloc_pooled);
		if (ri->alloc_bad_files)
			meta_u64(p, "alloc_bad_files", ri->alloc_bad_files);
		if (ri->cgroup_peak)
			meta_u64(p, "cgroup_memory_peak", ri->cgroup_peak);
	}
}

int tf_attribute_build(tf_profile **out, tf_recording *rec, tf_symbolizer *sym,
		       const tf_attribute_opts *opts, tf_attribute_stats *stats)
{
	const tf_record_info *ri = tf_recording_info(rec);
	tf_attribute_stats local;
	builder b;
	const char *type, *unit;
	int rc;

	memset(&b, 0, sizeof(b));
	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	tf_profile_new(&b.p);
	b.sym = sym;
	b.opts = opts;
	b.st = stats;
	tf_strtab_init(&b.modules);
	tf_event_value_type(ri->event, &type, &unit);
	tf_profile_add_sample_type(b.p, "samples", "count");
	/* wall time (ptrace's --event wall) is CPU time and the time waited:
	 * the event column is the CPU's, the wall column shown by default */
	b.time_event = ri->event == TF_EVENT_CPU_CLOCK || ri->event == TF_EVENT_WALL;
	tf_profile_add_sample_type(b.p, ri->event == TF_EVENT_WALL ? "cpu" : type, unit);
	if (ri->offcpu) {
		b.col_offcpu = tf_profile_add_sample_type(b.p, TF_OFFCPU_TYPE, "nanoseconds");
		if (b.time_event)
			b.col_wall = tf_profile_add_sample_type(b.p, TF_WALL_TYPE, "nanoseconds");
	}
	b.p->default_sample_type = tf_profile_intern(b.p, type);
	b.p->period_type.type = tf_profile_intern(b.p, type);
	b.p->period_type.unit = tf_profile_intern(b.p, unit);
	b.p->period = ri->freq ? (int64_t)(1000000000ULL / ri->freq) : 0;
	b.p->time_nanos = (int64_t)ri->start_realtime_ns;
	b.p->duration_nanos = (int64_t)(ri->end_ns - ri->start_ns);
	if (ri->memory) {
		/* pprof's heap profile's names, which go tool pprof, speedscope
		 * and Pyroscope know */
		b.col_objects = tf_profile_add_sample_type(b.p, "alloc_objects", "count");
		b.col_space = tf_profile_add_sample_type(b.p, "alloc_space", "bytes");
		b.col_inuse = tf_profile_add_sample_type(b.p, "inuse_space", "bytes");
	}
	b.k_test = tf_profile_intern(b.p, "test");
	b.k_process = tf_profile_intern(b.p, "process");
	b.k_pid = tf_profile_intern(b.p, "pid");
	b.k_tid = tf_profile_intern(b.p, "tid");
	b.k_wait = tf_profile_intern(b.p, "wait");
	b.py = tf_pyframes_new(b.p);
	rc = tf_attributor_new(&b.att, b.p, opts);
	if (!rc && ri->offcpu) {
		tf_attributor_set_offcpu(b.att, true);
		rc = tf_waits_new(&b.waits, b.att, on_wait, &b);
	}
	if (!rc) {
		tf_attributor_set_start(b.att, ri->start_realtime_ns, ri->start_ns);
		tf_attributor_set_time_event(b.att, ri->event == TF_EVENT_CPU_CLOCK);
		tf_attributor_set_symbolizer(b.att, sym);
		if (ri->memory)
			tf_attributor_set_memory(b.att);
		rc = tf_recording_replay(rec, on_event, &b);
	}
	if (!rc && b.waits)
		tf_waits_finish(b.waits, TF_MAX(b.last_time, ri->end_ns));
	if (!rc) {
		/* freq mode varies the period: record the mean one */
		uint64_t cpu_samples = stats->samples - stats->offcpu_waits;
		if (cpu_samples)
			b.p->period = b.period_sum / (int64_t)cpu_samples;
		stats->processes = tf_attributor_processes(b.att);
		stats->threads = tf_attributor_threads(b.att);
		stats->helper_samples = tf_attributor_helper_samples(b.att);
		stats->tests = tf_attributor_write_meta(b.att, TF_MAX(b.last_time, ri->end_ns));
		name_missing(&b);
		write_meta(&b, ri);
		tf_pyframes_write_meta(b.py, ri);
	}

	tf_waits_free(b.waits);
	tf_attributor_free(b.att);
	tf_pyframes_free(b.py);
	tf_vec_free(&b.loc_of_symloc);
	tf_vec_free(&b.missing);
	tf_strtab_free(&b.modules);
	tf_vec_free(&b.map_of_module);
	tf_vec_free(&b.lines);
	tf_vec_free(&b.offcpu_names);
	tf_vec_free(&b.offcpu_locs);
	if (rc) {
		tf_profile_free(b.p);
		return rc;
	}
	*out = b.p;
	return 0;
}

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
#include "testflame/attribute.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#define MAX_FRAMES 512

struct proc {
	uint32_t pid;
	tf_strid name;       /* program name, for the `process` label */
	bool exec_named;     /* name came from an exec (not inherited) */
	bool main_seen;      /* the main binary's mapping was seen after exec */
	uint64_t samples;
};

struct test_total {
	uint64_t samples;
	int64_t value;
};

typedef struct {
	tf_profile *p;
	tf_symbolizer *sym;
	const tf_attribute_opts *opts;
	tf_attribute_stats *st;
	TF_VEC(struct proc) procs;
	tf_htab proc_index;
	TF_VEC(uint32_t) tids;
	tf_htab tid_index;
	TF_VEC(uint32_t) loc_of_symloc;   /* symloc id -> location + 1 */
	tf_strtab modules;                /* module name -> mapping via map_of_module */
	TF_VEC(uint32_t) map_of_module;
	TF_VEC(struct test_total) tests;  /* by test string id */
	tf_strid k_test, k_process, k_pid, k_tid, default_test;
	TF_VEC(tf_line) lines;
	uint64_t ips[MAX_FRAMES];
	uint32_t locs[MAX_FRAMES];
} builder;

static bool u32_eq(const void *ctx, uint32_t idx, const void *key)
{
	const uint32_t *arr = ctx;
	return arr[idx] == *(const uint32_t *)key;
}

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct proc *arr = ctx;
	return arr[idx].pid == *(const uint32_t *)key;
}

static struct proc *proc_get(builder *b, uint32_t pid, bool create)
{
	uint32_t i = tf_htab_find(&b->proc_index, tf_hash_u64(pid), proc_eq, b->procs.v, &pid);
	if (i != TF_HTAB_NONE)
		return &b->procs.v[i];
	if (!create)
		return NULL;
	struct proc pr = { .pid = pid };
	tf_vec_push(&b->procs, pr);
	tf_htab_insert(&b->proc_index, tf_hash_u64(pid), (uint32_t)b->procs.n - 1);
	return &b->procs.v[b->procs.n - 1];
}

static void note_tid(builder *b, uint32_t tid)
{
	if (tf_htab_find(&b->tid_index, tf_hash_u64(tid), u32_eq, b->tids.v, &tid) != TF_HTAB_NONE)
		return;
	tf_vec_push(&b->tids, tid);
	tf_htab_insert(&b->tid_index, tf_hash_u64(tid), (uint32_t)b->tids.n - 1);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void on_sideband(builder *b, const tf_rec_event *ev)
{
	struct proc *pr;

	switch (ev->type) {
	case TF_REC_COMM:
		pr = proc_get(b, ev->pid, true);
		if (ev->comm.exec || !pr->name || ev->pid == ev->tid) {
			if (ev->comm.exec || !pr->exec_named) {
				pr->name = tf_profile_intern(b->p, ev->comm.comm);
				pr->exec_named = ev->comm.exec || pr->exec_named;
				pr->main_seen = false;
			}
		}
		note_tid(b, ev->tid);
		break;
	case TF_REC_FORK:
		note_tid(b, ev->tid);
		if (ev->pid != ev->fork.ppid) {
			struct proc *parent = proc_get(b, ev->fork.ppid, false);
			tf_strid name = parent ? parent->name : 0;
			pr = proc_get(b, ev->pid, true);
			pr->name = name;
			pr->exec_named = false;
			pr->main_seen = true;
		}
		break;
	case TF_REC_MMAP:
		/* the first executable mapping after an exec is the program: its
		 * file name is the program's full name, where comm is cut at 15 */
		pr = proc_get(b, ev->pid, true);
		if (pr->exec_named && !pr->main_seen && ev->mmap.filename[0] == '/') {
			const char *bn = base_name(ev->mmap.filename);
			const char *comm = tf_profile_str(b->p, pr->name);
			size_t cl = strlen(comm);
			if (cl >= 15 && strlen(bn) > cl && strncmp(bn, comm, cl) == 0)
				pr->name = tf_profile_intern(b->p, bn);
			pr->main_seen = true;
		}
		break;
	default:
		break;
	}
}

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

static void add_total(builder *b, tf_strid test, int64_t value)
{
	while (b->tests.n <= test) {
		struct test_total z = { 0, 0 };
		tf_vec_push(&b->tests, z);
	}
	b->tests.v[test].samples++;
	b->tests.v[test].value += value;
}

static void on_sample(builder *b, const tf_rec_event *ev)
{
	const uint64_t *user = ev->sample.user_ips;
	size_t nuser = ev->sample.nuser, n = 0;
	size_t maxd = TF_MIN((size_t)b->opts->max_depth, (size_t)MAX_FRAMES);
	bool truncated = ev->sample.user_truncated, dwarf = false;
	struct proc *pr;

	if (ev->sample.stack && ev->sample.regs && nuser > 0) {
		if (b->opts->callgraph == TF_CALLGRAPH_DWARF)
			dwarf = true;
		else if (b->opts->callgraph == TF_CALLGRAPH_AUTO)
			dwarf = !tf_symbolizer_has_frame_pointers(b->sym, ev->pid, ev->time, user[0]);
	}
	if (dwarf) {
		size_t got = tf_symbolizer_unwind(b->sym, ev->pid, ev->time, ev->sample.regs,
						  ev->sample.regs_mask, ev->sample.stack,
						  ev->sample.stack_size, b->ips, maxd);
		if (got > 1 || nuser <= 1) {
			user = b->ips;
			nuser = got;
			b->st->dwarf_stacks++;
		} else {
			dwarf = false;
		}
	}
	if (!dwarf && nuser)
		b->st->fp_stacks++;

	/* leaf first: kernel frames, then user frames */
	for (uint32_t i = 0; i < ev->sample.nkernel && n < maxd; i++) {
		uint64_t a = ev->sample.kernel_ips[i];
		const tf_symloc *sl = tf_symbolizer_lookup(b->sym, ev->pid, ev->time,
							   i ? a - 1 : a, true);
		b->locs[n++] = location_for(b, sl);
		b->st->frames++;
		if (!sl->resolved)
			b->st->unresolved++;
	}
	for (size_t i = 0; i < nuser && n < maxd; i++) {
		uint64_t a = user[i];
		/* every frame but the sample's own ip is a return address */
		bool leaf = i == 0 && ev->sample.nkernel == 0;
		if (!a)
			continue;
		const tf_symloc *sl = tf_symbolizer_lookup(b->sym, ev->pid, ev->time,
							   leaf ? a : a - 1, false);
		b->locs[n++] = location_for(b, sl);
		b->st->frames++;
		if (!sl->resolved)
			b->st->unresolved++;
	}
	if (n == maxd && (ev->sample.nkernel + nuser) > maxd)
		truncated = true;
	if (truncated)
		b->st->truncated++;

	pr = proc_get(b, ev->pid, true);
	pr->samples++;
	note_tid(b, ev->tid);
	tf_strid test = b->default_test;
	tf_label labels[4] = {
		{ b->k_test, test, 0, 0 },
		{ b->k_process, pr->name ? pr->name : tf_profile_intern(b->p, "[unknown]"), 0, 0 },
		{ b->k_pid, 0, ev->pid, 0 },
		{ b->k_tid, 0, ev->tid, 0 },
	};
	int64_t values[2] = { 1, (int64_t)ev->sample.period };
	tf_profile_add_sample(b->p, b->locs, (uint32_t)n, values, labels, 4);
	add_total(b, test, values[1]);
	b->st->samples++;
}

static int on_event(void *ctx, const tf_rec_event *ev)
{
	builder *b = ctx;
	switch (ev->type) {
	case TF_REC_SAMPLE:
		on_sample(b, ev);
		break;
	case TF_REC_MMAP:
	case TF_REC_COMM:
	case TF_REC_FORK:
	case TF_REC_EXIT:
		tf_symbolizer_event(b->sym, ev);
		on_sideband(b, ev);
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
	if (b->opts->command)
		tf_profile_set_meta(p, "command", b->opts->command);
	if (b->opts->suite)
		tf_profile_set_meta(p, "suite", b->opts->suite);
	tf_profile_set_meta(p, "event", tf_event_name(ri->event));
	meta_u64(p, "freq", ri->freq);
	meta_u64(p, "period", (uint64_t)p->period);
	tf_profile_set_meta(p, "sampler", tf_sampler_name(ri->sampler));
	tf_profile_set_meta(p, "rung", ri->rung ? ri->rung : "");
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
	for (size_t i = 0; i < b->tests.n; i++) {
		if (!b->tests.v[i].samples)
			continue;
		char *key = tf_xasprintf("test.%s", tf_profile_str(p, (tf_strid)i));
		snprintf(buf, sizeof(buf), "samples=%llu value=%lld",
			 (unsigned long long)b->tests.v[i].samples, (long long)b->tests.v[i].value);
		tf_profile_set_meta(p, key, buf);
		free(key);
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
	tf_profile_add_sample_type(b.p, type, unit);
	b.p->default_sample_type = tf_profile_intern(b.p, type);
	b.p->period_type.type = tf_profile_intern(b.p, type);
	b.p->period_type.unit = tf_profile_intern(b.p, unit);
	b.p->period = ri->freq ? (int64_t)(1000000000ULL / ri->freq) : 0;
	b.p->time_nanos = (int64_t)ri->start_realtime_ns;
	b.p->duration_nanos = (int64_t)(ri->end_ns - ri->start_ns);
	b.k_test = tf_profile_intern(b.p, "test");
	b.k_process = tf_profile_intern(b.p, "process");
	b.k_pid = tf_profile_intern(b.p, "pid");
	b.k_tid = tf_profile_intern(b.p, "tid");
	b.default_test = tf_profile_intern(b.p, opts->test_name && *opts->test_name
					   ? opts->test_name : "all");

	rc = tf_recording_replay(rec, on_event, &b);
	if (!rc) {
		/* freq mode varies the period: record the mean one */
		if (stats->samples)
			b.p->period = tf_profile_total(b.p, 1) / (int64_t)stats->samples;
		stats->processes = b.procs.n;
		stats->threads = b.tids.n;
		for (size_t i = 0; i < b.tests.n; i++)
			stats->tests += b.tests.v[i].samples > 0;
		write_meta(&b, ri);
	}

	tf_vec_free(&b.procs);
	tf_htab_free(&b.proc_index);
	tf_vec_free(&b.tids);
	tf_htab_free(&b.tid_index);
	tf_vec_free(&b.loc_of_symloc);
	tf_strtab_free(&b.modules);
	tf_vec_free(&b.map_of_module);
	tf_vec_free(&b.tests);
	tf_vec_free(&b.lines);
	if (rc) {
		tf_profile_free(b.p);
		return rc;
	}
	*out = b.p;
	return 0;
}

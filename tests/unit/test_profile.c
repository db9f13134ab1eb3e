/*
 * test_profile.c - the profile model and its pprof / folded codecs:
 * deduplication, metadata, round trips, refusal of corrupt input, and
 * the pprof writer's bytes against protobuf-c's (the reference encoder).
 */
#include "unit.h"
#include "testflame/profile.h"
#include "profile.pb-c.h"

static tf_profile *make_profile(void)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	uint32_t fmain = tf_profile_function(p, "main", "main.c", 10);
	uint32_t fhot = tf_profile_function(p, "hot", "hot.c", 3);
	tf_line lmain = { fmain, 12, 0 }, lhot = { fhot, 5, 0 };
	uint32_t locs[2];
	locs[0] = tf_profile_add_location(p, TF_NO_MAPPING, 0x1010, &lhot, 1);
	locs[1] = tf_profile_add_location(p, TF_NO_MAPPING, 0x2020, &lmain, 1);
	tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, "t1"), 0, 0 };
	int64_t v[2] = { 1, 10000000 };
	for (int i = 0; i < 7; i++)
		tf_profile_add_sample(p, locs, 2, v, &lab, 1);
	tf_profile_add_sample(p, locs + 1, 1, v, &lab, 1);
	tf_profile_set_meta(p, "event", "cpu-clock");
	tf_profile_set_meta(p, "event", "instructions");
	return p;
}

static void test_dedup_and_merge(void **state)
{
	(void)state;
	tf_profile *p = make_profile();
	assert_int_equal(p->functions.n, 2);
	assert_int_equal(p->locations.n, 2);
	assert_int_equal(p->samples.n, 2);            /* 7 equal samples merged */
	assert_int_equal(tf_sample_values(p, 0)[0], 7);
	assert_int_equal(tf_profile_total(p, 1), 80000000);
	assert_string_equal(tf_profile_meta(p, "event"), "instructions");
	assert_int_equal(p->comments.n, 1);
	assert_null(tf_profile_meta(p, "ev"));
	tf_profile_free(p);
}

/* Many keys at once: the same comments as setting them one by one, an
 * existing key (even a prefix of another) replaced in place, a key given
 * twice keeping its last value. */
/* Who made a run file: version, commit and dirty from its metadata; the
 * measure version, 1 for testflame's files from before it was kept. */
static void test_made_by(void **state)
{
	(void)state;
	tf_profile *p = make_profile();
	char buf[96];
	assert_null(tf_profile_made_by(buf, sizeof(buf), p));
	assert_int_equal(tf_profile_measure(p), 0);
	tf_profile_set_meta(p, "version", "0.1.0");
	assert_string_equal(tf_profile_made_by(buf, sizeof(buf), p), "testflame 0.1.0");
	assert_int_equal(tf_profile_measure(p), 1);
	tf_profile_set_meta(p, "build", "5b9f97c3a1b2c3d4e5f60718293a4b5c6d7e8f90-dirty");
	tf_profile_set_meta(p, "measure", "2");
	assert_string_equal(tf_profile_made_by(buf, sizeof(buf), p),
			    "testflame 0.1.0 (commit 5b9f97c3a1b2, dirty)");
	assert_int_equal(tf_profile_measure(p), 2);
	tf_profile_set_meta(p, "build", "not hex");
	tf_profile_set_meta(p, "measure", "x");
	assert_string_equal(tf_profile_made_by(buf, sizeof(buf), p), "testflame 0.1.0");
	assert_int_equal(tf_profile_measure(p), 0);
	tf_profile_free(p);
}

static void test_set_metas(void **state)
{
	(void)state;
	tf_profile *p = make_profile(), *q = make_profile();
	char *keys[2003], *values[2003];
	size_t n = 0;
	tf_profile_set_meta(p, "test.a", "old");
	tf_profile_set_meta(q, "test.a", "old");
	for (int i = 0; i < 2000; i++) {
		keys[n] = tf_xasprintf("test.t%d", i);
		values[n++] = tf_xasprintf("cpu=%d", i);
	}
	keys[n] = tf_xstrdup("test.a");
	values[n++] = tf_xstrdup("new");
	keys[n] = tf_xstrdup("event");
	values[n++] = tf_xstrdup("cpu-clock");
	keys[n] = tf_xstrdup("test.t7");
	values[n++] = tf_xstrdup("last");
	tf_profile_set_metas(p, keys, values, n);
	for (size_t i = 0; i < n; i++)
		tf_profile_set_meta(q, keys[i], values[i]);
	assert_int_equal(p->comments.n, q->comments.n);
	assert_int_equal(p->comments.n, 2002);
	for (size_t i = 0; i < p->comments.n; i++)
		assert_string_equal(tf_profile_str(p, p->comments.v[i]), tf_profile_str(q, q->comments.v[i]));
	assert_string_equal(tf_profile_meta(p, "test.a"), "new");
	assert_string_equal(tf_profile_meta(p, "event"), "cpu-clock");
	assert_string_equal(tf_profile_meta(p, "test.t7"), "last");
	assert_string_equal(tf_profile_meta(p, "test.t1999"), "cpu=1999");
	for (size_t i = 0; i < n; i++) {
		free(keys[i]);
		free(values[i]);
	}
	tf_profile_free(p);
	tf_profile_free(q);
}

static void test_pprof_round_trip(void **state)
{
	(void)state;
	tf_profile *p = make_profile(), *q;
	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_pprof_encode(&b, p, 6), 0);
	assert_true(tf_is_gzip(b.ptr, b.len));
	assert_int_equal(tf_pprof_decode(&q, b.ptr, b.len), 0);
	assert_int_equal(tf_profile_validate(q), 0);
	assert_int_equal(q->samples.n, 2);
	assert_int_equal(q->sample_types.n, 2);
	assert_string_equal(tf_profile_str(q, q->sample_types.v[1].unit), "nanoseconds");
	assert_int_equal(tf_profile_total(q, 0), 8);
	assert_string_equal(tf_sample_label_str(q, &q->samples.v[0], "test"), "t1");
	const tf_location *l = &q->locations.v[q->stack.v[q->samples.v[0].locs_off]];
	assert_int_equal(l->address, 0x1010);
	assert_string_equal(tf_profile_str(q, q->functions.v[q->lines.v[l->lines_off].function].name), "hot");
	assert_string_equal(tf_profile_meta(q, "event"), "instructions");
	tf_buf_free(&b);
	tf_profile_free(p);
	tf_profile_free(q);
}

static void test_pprof_corrupt(void **state)
{
	(void)state;
	tf_profile *p = make_profile(), *q = NULL;
	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_pprof_encode(&b, p, 6), 0);
	/* truncated gzip */
	assert_int_equal(tf_pprof_decode(&q, b.ptr, b.len / 2), TF_EINVAL);
	assert_null(q);
	assert_non_null(strstr(tf_error_last(), "truncated"));
	/* garbage protobuf */
	assert_int_equal(tf_pprof_decode(&q, "\x0a\xff\xff\xff\x0f", 5), TF_EINVAL);
	tf_buf_free(&b);
	tf_profile_free(p);
}

static void test_folded(void **state)
{
	(void)state;
	const char *text = "main;work;hot 70\nmain;work;cold 30\n\nmain;work;hot 5\n";
	tf_profile *p;
	tf_buf out = TF_BUF_INIT;
	assert_int_equal(tf_folded_decode(&p, text, strlen(text), "x.folded"), 0);
	assert_int_equal(p->samples.n, 2);
	assert_int_equal(tf_profile_total(p, 0), 105);
	assert_int_equal(tf_folded_write(&out, p, 0, NULL, NULL), 0);
	assert_non_null(strstr(out.ptr, "main;work;hot 75\n"));
	assert_non_null(strstr(out.ptr, "main;work;cold 30\n"));
	tf_buf_free(&out);
	tf_profile_free(p);

	/* the two-column diff form */
	const char *diff = "a;b 3 4\na;c 0 9\n";
	assert_int_equal(tf_folded_decode(&p, diff, strlen(diff), "d"), 0);
	assert_int_equal(p->sample_types.n, 2);
	assert_int_equal(tf_profile_total(p, 0), 3);
	assert_int_equal(tf_profile_total(p, 1), 13);
	tf_profile_free(p);

	/* bad lines name the file and line */
	const char *bad = "a;b 3\na;b x\n";
	assert_int_equal(tf_folded_decode(&p, bad, strlen(bad), "bad.folded"), TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "bad.folded:2"));
}

/* A profile of one test whose "hot" frame has `n` samples of 1 ms. */
static tf_profile *make_run(int n, const char *test)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	uint32_t f = tf_profile_function(p, "hot", "hot.c", 3);
	tf_line l = { f, 5, 0 };
	uint32_t loc = tf_profile_add_location(p, TF_NO_MAPPING, 0x1010, &l, 1);
	tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, test), 0, 0 };
	int64_t v[2] = { 1, 1000000 };
	for (int i = 0; i < n; i++)
		tf_profile_add_sample(p, &loc, 1, v, &lab, 1);
	tf_profile_set_meta(p, "event", "cpu-clock");
	p->duration_nanos = 1000;
	return p;
}

/* Runs joined into one file (a baseline of `run --repeat`) come apart
 * again, each with its own samples, after a trip through pprof. */
static void test_join_split_runs(void **state)
{
	(void)state;
	const int counts[3] = { 100, 103, 98 };
	tf_profile *runs[3], *joined, *back, **parts;
	size_t nparts;
	tf_buf b = TF_BUF_INIT;

	for (int i = 0; i < 3; i++)
		runs[i] = make_run(counts[i], "t1");
	assert_int_equal(tf_profile_count_runs(runs[0]), 1);
	assert_int_equal(tf_profile_join_runs(&joined, (const tf_profile *const *)runs, 3), 0);
	assert_int_equal(tf_profile_count_runs(joined), 3);
	assert_int_equal(joined->samples.n, 3);  /* one stack per run, kept apart */
	assert_int_equal(tf_profile_total(joined, 0), 301);
	assert_int_equal(joined->duration_nanos, 3000);
	assert_int_equal(tf_pprof_encode(&b, joined, 6), 0);
	assert_int_equal(tf_pprof_decode(&back, b.ptr, b.len), 0);
	assert_int_equal(tf_profile_split_runs(&parts, &nparts, back), 0);
	assert_int_equal(nparts, 3);
	for (size_t i = 0; i < nparts; i++) {
		assert_int_equal(tf_profile_total(parts[i], 0), counts[i]);
		assert_int_equal(tf_profile_count_runs(parts[i]), 1);
		assert_string_equal(tf_sample_label_str(parts[i], &parts[i]->samples.v[0], "test"), "t1");
		assert_string_equal(tf_profile_meta(parts[i], "event"), "cpu-clock");
		assert_int_equal(parts[i]->duration_nanos, 1000);
		tf_profile_free(parts[i]);
	}
	free(parts);
	/* an ordinary profile splits into a copy of itself */
	assert_int_equal(tf_profile_split_runs(&parts, &nparts, runs[0]), 0);
	assert_int_equal(nparts, 1);
	assert_int_equal(tf_profile_total(parts[0], 0), 100);
	tf_profile_free(parts[0]);
	free(parts);
	for (int i = 0; i < 3; i++)
		tf_profile_free(runs[i]);
	tf_profile_free(joined);
	tf_profile_free(back);
	tf_buf_free(&b);
}

/* profile.proto packed by protobuf-c, the reference tf_pprof_encode()
 * must match byte for byte. */
static void pack_reference(tf_buf *out, const tf_profile *p)
{
	Perftools__Profiles__Profile pb = PERFTOOLS__PROFILES__PROFILE__INIT;
	size_t nv = p->sample_types.n;
	Perftools__Profiles__ValueType *vts = tf_xcalloc(nv + 1, sizeof(*vts)), period_type;
	Perftools__Profiles__ValueType **vtp = tf_xcalloc(nv + 1, sizeof(*vtp));
	Perftools__Profiles__Function *fns = tf_xcalloc(p->functions.n + 1, sizeof(*fns));
	Perftools__Profiles__Function **fnp = tf_xcalloc(p->functions.n + 1, sizeof(*fnp));
	Perftools__Profiles__Line *lines = tf_xcalloc(p->lines.n + 1, sizeof(*lines));
	Perftools__Profiles__Line **linep = tf_xcalloc(p->lines.n + 1, sizeof(*linep));
	Perftools__Profiles__Location *locs = tf_xcalloc(p->locations.n + 1, sizeof(*locs));
	Perftools__Profiles__Location **locp = tf_xcalloc(p->locations.n + 1, sizeof(*locp));
	Perftools__Profiles__Mapping *maps = tf_xcalloc(p->mappings.n + 1, sizeof(*maps));
	Perftools__Profiles__Mapping **mapp = tf_xcalloc(p->mappings.n + 1, sizeof(*mapp));
	Perftools__Profiles__Sample *samples = tf_xcalloc(p->samples.n + 1, sizeof(*samples));
	Perftools__Profiles__Sample **samplep = tf_xcalloc(p->samples.n + 1, sizeof(*samplep));
	Perftools__Profiles__Label *labels = tf_xcalloc(p->labels.n + 1, sizeof(*labels));
	Perftools__Profiles__Label **labelp = tf_xcalloc(p->labels.n + 1, sizeof(*labelp));
	uint64_t *stack = tf_xcalloc(p->stack.n + 1, sizeof(*stack));
	int64_t *comments = tf_xcalloc(p->comments.n + 1, sizeof(*comments));

	for (size_t i = 0; i < nv; i++) {
		perftools__profiles__value_type__init(&vts[i]);
		vts[i].type = p->sample_types.v[i].type;
		vts[i].unit = p->sample_types.v[i].unit;
		vtp[i] = &vts[i];
	}
	pb.n_sample_type = nv;
	pb.sample_type = vtp;
	for (size_t i = 0; i < p->functions.n; i++) {
		perftools__profiles__function__init(&fns[i]);
		fns[i].id = i + 1;
		fns[i].name = p->functions.v[i].name;
		fns[i].system_name = p->functions.v[i].system_name;
		fns[i].filename = p->functions.v[i].filename;
		fns[i].start_line = p->functions.v[i].start_line;
		fnp[i] = &fns[i];
	}
	pb.n_function = p->functions.n;
	pb.function = fnp;
	for (size_t i = 0; i < p->lines.n; i++) {
		perftools__profiles__line__init(&lines[i]);
		lines[i].function_id = p->lines.v[i].function + 1;
		lines[i].line = p->lines.v[i].line;
		lines[i].column = p->lines.v[i].column;
		linep[i] = &lines[i];
	}
	for (size_t i = 0; i < p->locations.n; i++) {
		const tf_location *l = &p->locations.v[i];
		perftools__profiles__location__init(&locs[i]);
		locs[i].id = i + 1;
		locs[i].mapping_id = l->mapping == TF_NO_MAPPING ? 0 : l->mapping + 1;
		locs[i].address = l->address;
		locs[i].n_line = l->nlines;
		locs[i].line = linep + l->lines_off;
		locs[i].is_folded = l->is_folded;
		locp[i] = &locs[i];
	}
	pb.n_location = p->locations.n;
	pb.location = locp;
	for (size_t i = 0; i < p->mappings.n; i++) {
		const tf_mapping *m = &p->mappings.v[i];
		perftools__profiles__mapping__init(&maps[i]);
		maps[i].id = i + 1;
		maps[i].memory_start = m->memory_start;
		maps[i].memory_limit = m->memory_limit;
		maps[i].file_offset = m->file_offset;
		maps[i].filename = m->filename;
		maps[i].build_id = m->build_id;
		maps[i].has_functions = !!(m->flags & TF_MAPPING_HAS_FUNCTIONS);
		maps[i].has_filenames = !!(m->flags & TF_MAPPING_HAS_FILENAMES);
		maps[i].has_line_numbers = !!(m->flags & TF_MAPPING_HAS_LINE_NUMBERS);
		maps[i].has_inline_frames = !!(m->flags & TF_MAPPING_HAS_INLINE_FRAMES);
		mapp[i] = &maps[i];
	}
	pb.n_mapping = p->mappings.n;
	pb.mapping = mapp;
	for (size_t i = 0; i < p->stack.n; i++)
		stack[i] = (uint64_t)p->stack.v[i] + 1;
	for (size_t i = 0; i < p->labels.n; i++) {
		perftools__profiles__label__init(&labels[i]);
		labels[i].key = p->labels.v[i].key;
		labels[i].str = p->labels.v[i].str;
		labels[i].num = p->labels.v[i].num;
		labels[i].num_unit = p->labels.v[i].num_unit;
		labelp[i] = &labels[i];
	}
	for (size_t i = 0; i < p->samples.n; i++) {
		const tf_sample *s = &p->samples.v[i];
		perftools__profiles__sample__init(&samples[i]);
		samples[i].n_location_id = s->nlocs;
		samples[i].location_id = stack + s->locs_off;
		samples[i].n_value = nv;
		samples[i].value = (int64_t *)p->values.v + i * nv;
		samples[i].n_label = s->nlabels;
		samples[i].label = labelp + s->labels_off;
		samplep[i] = &samples[i];
	}
	pb.n_sample = p->samples.n;
	pb.sample = samplep;
	pb.n_string_table = p->strings.strs.n;
	pb.string_table = (char **)p->strings.strs.v;
	pb.drop_frames = p->drop_frames;
	pb.keep_frames = p->keep_frames;
	pb.time_nanos = p->time_nanos;
	pb.duration_nanos = p->duration_nanos;
	if (p->period_type.type || p->period_type.unit) {
		perftools__profiles__value_type__init(&period_type);
		period_type.type = p->period_type.type;
		period_type.unit = p->period_type.unit;
		pb.period_type = &period_type;
	}
	pb.period = p->period;
	for (size_t i = 0; i < p->comments.n; i++)
		comments[i] = p->comments.v[i];
	pb.n_comment = p->comments.n;
	pb.comment = comments;
	pb.default_sample_type = p->default_sample_type;
	pb.doc_url = p->doc_url;

	size_t len = perftools__profiles__profile__get_packed_size(&pb);
	tf_buf_grow(out, len);
	perftools__profiles__profile__pack(&pb, (uint8_t *)out->ptr + out->len);
	out->len += len;
	free(vts); free(vtp); free(fns); free(fnp); free(lines); free(linep);
	free(locs); free(locp); free(maps); free(mapp); free(samples); free(samplep);
	free(labels); free(labelp); free(stack); free(comments);
}

static void assert_encodes_as_reference(const tf_profile *p)
{
	tf_buf ours = TF_BUF_INIT, ref = TF_BUF_INIT;
	assert_int_equal(tf_pprof_encode(&ours, p, 0), 0);
	pack_reference(&ref, p);
	assert_int_equal(ours.len, ref.len);
	assert_memory_equal(ours.ptr, ref.ptr, ref.len);
	tf_buf_free(&ours);
	tf_buf_free(&ref);
}

/* Every field of profile.proto, zero and not, large and negative, as
 * protobuf-c packs them. */
static void test_pprof_encode_as_protobuf_c(void **state)
{
	tf_profile *p;
	(void)state;

	tf_profile_new(&p); /* nothing but the empty string */
	assert_encodes_as_reference(p);
	tf_profile_free(p);

	p = make_profile();
	tf_profile_add_sample_type(p, "alloc_space", "bytes");
	tf_mapping m = { 0x400000, 0x7fffffffffffULL, 0x1000, tf_profile_intern(p, "/bin/x"),
			 tf_profile_intern(p, "abcdef"),
			 TF_MAPPING_HAS_FUNCTIONS | TF_MAPPING_HAS_LINE_NUMBERS };
	uint32_t mi = tf_profile_add_mapping(p, &m);
	tf_mapping m0 = { 0, 0, 0, 0, 0, TF_MAPPING_HAS_INLINE_FRAMES | TF_MAPPING_HAS_FILENAMES };
	tf_profile_add_mapping(p, &m0);
	uint32_t f = tf_profile_add_function(p, tf_profile_intern(p, "inl"), tf_profile_intern(p, "_Z3inlv"),
					     tf_profile_intern(p, "inl.h"), -7);
	uint32_t g = tf_profile_add_function(p, 0, 0, 0, 0);
	tf_line ls[3] = { { f, 1 << 20, 3 }, { g, 0, 0 }, { f, -1, 129 } };
	uint32_t locs[4];
	locs[0] = tf_profile_add_location(p, mi, 0xffffffffffffffffULL, ls, 3);
	locs[1] = tf_profile_add_location(p, TF_NO_MAPPING, 0, NULL, 0);
	locs[2] = tf_profile_add_location(p, mi, 0x401000, ls + 1, 1);
	locs[3] = locs[0];
	p->locations.v[locs[2]].is_folded = true;
	tf_label lab[3] = { { tf_profile_intern(p, "pid"), 0, -42, tf_profile_intern(p, "id") },
			    { tf_profile_intern(p, "test"), tf_profile_intern(p, "t2"), 0, 0 },
			    { 0, 0, 0, 0 } };
	int64_t v[3] = { 0, -1, INT64_MAX };
	tf_profile_add_sample(p, locs, 4, v, lab, 3);
	int64_t w[3] = { 127, 128, INT64_MIN };
	tf_profile_add_sample(p, NULL, 0, w, NULL, 0);
	tf_profile_add_sample(p, locs + 1, 2, w, lab + 1, 1);
	p->period_type.type = tf_profile_intern(p, "cpu");
	p->period = 10000000;
	p->time_nanos = -1;
	p->duration_nanos = 1LL << 40;
	p->drop_frames = tf_profile_intern(p, "drop.*");
	p->keep_frames = 0;
	p->default_sample_type = tf_profile_intern(p, "alloc_space");
	p->doc_url = tf_profile_intern(p, "https://example.com/doc");
	assert_encodes_as_reference(p);
	tf_profile_free(p);

	/* gzip on top, decoded back as it went in */
	p = make_profile();
	tf_buf z = TF_BUF_INIT;
	tf_profile *q = NULL;
	assert_int_equal(tf_pprof_encode(&z, p, 1), 0);
	if (tf_pprof_decode(&q, z.ptr, z.len) != 0)
		fail_msg("%s", tf_error_last());
	assert_int_equal(q->samples.n, p->samples.n);
	assert_int_equal(q->locations.n, p->locations.n);
	assert_int_equal(q->values.v[1], p->values.v[1]);
	tf_buf_free(&z);
	tf_profile_free(q);
	tf_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedup_and_merge),
		cmocka_unit_test(test_set_metas),
		cmocka_unit_test(test_made_by),
		cmocka_unit_test(test_pprof_round_trip),
		cmocka_unit_test(test_pprof_encode_as_protobuf_c),
		cmocka_unit_test(test_pprof_corrupt),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_join_split_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

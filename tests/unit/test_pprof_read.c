/*
 * test_pprof_read.c - the direct pprof wire decoder: profiles laid out the
 * way other encoders lay them out (Go's order, string table last, sparse
 * ids, unpacked repeated fields, unknown fields), a randomized round trip
 * through protobuf-c's encoder, and refusal of every kind of broken input.
 */
#include "unit.h"
#include "testflame/profile.h"

/* A tiny protobuf writer, so the tests build exactly the bytes they mean. */
static void pb_varint(tf_buf *b, uint64_t v)
{
	while (v >= 0x80) {
		tf_buf_putc(b, (char)(v | 0x80));
		v >>= 7;
	}
	tf_buf_putc(b, (char)v);
}

static void pb_key(tf_buf *b, unsigned field, unsigned wt)
{
	pb_varint(b, ((uint64_t)field << 3) | wt);
}

static void pb_uint(tf_buf *b, unsigned field, uint64_t v)
{
	pb_key(b, field, 0);
	pb_varint(b, v);
}

static void pb_bytes(tf_buf *b, unsigned field, const void *data, size_t len)
{
	pb_key(b, field, 2);
	pb_varint(b, len);
	tf_buf_put(b, data, len);
}

static void pb_msg(tf_buf *b, unsigned field, tf_buf *sub)
{
	pb_bytes(b, field, sub->ptr ? sub->ptr : "", sub->len);
	tf_buf_clear(sub);
}

static void pb_str(tf_buf *b, const char *s)
{
	pb_bytes(b, 6, s, strlen(s));
}

/*
 * Go's layout: sample types, samples, mappings, locations, functions, then
 * the string table. Ids sparse and out of order; location ids unpacked in
 * one sample, packed in the other; unknown fields sprinkled in.
 */
static void go_style(tf_buf *b, bool break_it)
{
	tf_buf m = TF_BUF_INIT, s = TF_BUF_INIT;

	/* strings: 0 "" 1 samples 2 count 3 cpu 4 nanoseconds 5 main 6 hot
	 * 7 main.go 8 test 9 t1 10 /bin/x 11 comment 12 pid */
	pb_uint(&m, 1, 1); pb_uint(&m, 2, 2); pb_msg(b, 1, &m);
	pb_uint(&m, 1, 3); pb_uint(&m, 2, 4); pb_msg(b, 1, &m);

	/* sample 1: unpacked ids [700, 900], packed values, two labels */
	pb_uint(&s, 1, 700); pb_uint(&s, 1, 900);
	pb_varint(&m, 3); pb_varint(&m, 30000000); pb_bytes(&s, 2, m.ptr, m.len); tf_buf_clear(&m);
	pb_uint(&m, 1, 8); pb_uint(&m, 2, 9); pb_msg(&s, 3, &m);
	pb_uint(&m, 1, 12); pb_uint(&m, 3, 4242); pb_msg(&s, 3, &m);
	pb_key(&s, 15, 5); tf_buf_put(&s, "abcd", 4);         /* unknown fixed32 */
	pb_msg(b, 2, &s);
	/* sample 2: packed ids [900], unpacked values */
	pb_varint(&m, break_it ? 901 : 900); pb_bytes(&s, 1, m.ptr, m.len); tf_buf_clear(&m);
	pb_uint(&s, 2, 1); pb_uint(&s, 2, 10000000);
	pb_msg(b, 2, &s);

	pb_uint(&m, 1, 55); pb_uint(&m, 2, 0x400000); pb_uint(&m, 3, 0x500000);
	pb_uint(&m, 5, 10); pb_uint(&m, 7, 1); pb_uint(&m, 9, 1);
	pb_msg(b, 3, &m);

	/* location 900: main, with a mapping; location 700: hot inlined into main */
	pb_uint(&m, 1, 900); pb_uint(&m, 2, 55); pb_uint(&m, 3, 0x401000);
	pb_uint(&s, 1, 31); pb_uint(&s, 2, 12); pb_msg(&m, 4, &s);
	pb_msg(b, 4, &m);
	pb_uint(&m, 1, 700); pb_uint(&m, 3, 0x402000);
	pb_uint(&s, 1, 32); pb_uint(&s, 2, 3); pb_msg(&m, 4, &s);
	pb_uint(&s, 1, 31); pb_uint(&s, 2, 20); pb_msg(&m, 4, &s);
	pb_msg(b, 4, &m);

	pb_uint(&m, 1, 32); pb_uint(&m, 2, 6); pb_uint(&m, 3, 6); pb_uint(&m, 4, 7); pb_uint(&m, 5, 2);
	pb_msg(b, 5, &m);
	pb_uint(&m, 1, 31); pb_uint(&m, 2, 5); pb_uint(&m, 3, 5); pb_uint(&m, 4, 7); pb_uint(&m, 5, 10);
	pb_msg(b, 5, &m);

	pb_key(b, 100, 1); tf_buf_put(b, "12345678", 8);     /* unknown fixed64 */
	pb_str(b, ""); pb_str(b, "samples"); pb_str(b, "count"); pb_str(b, "cpu");
	pb_str(b, "nanoseconds"); pb_str(b, "main"); pb_str(b, "hot"); pb_str(b, "main.go");
	pb_str(b, "test"); pb_str(b, "t1"); pb_str(b, "/bin/x"); pb_str(b, "testflame.event=x");
	pb_str(b, "pid");
	pb_uint(b, 13, 11);                                   /* comment, unpacked */
	pb_uint(&m, 1, 3); pb_uint(&m, 2, 4); pb_msg(b, 11, &m);
	pb_uint(b, 12, 10000000);
	pb_uint(b, 9, 1700000000000000000ULL);
	pb_uint(b, 14, 3);
	tf_buf_free(&m);
	tf_buf_free(&s);
}

static void test_foreign_layout(void **state)
{
	(void)state;
	tf_buf b = TF_BUF_INIT;
	tf_profile *p;

	go_style(&b, false);
	assert_int_equal(tf_pprof_decode(&p, b.ptr, b.len), 0);
	assert_int_equal(tf_profile_validate(p), 0);
	assert_int_equal(p->samples.n, 2);
	assert_int_equal(p->sample_types.n, 2);
	assert_string_equal(tf_profile_str(p, p->sample_types.v[1].type), "cpu");
	assert_int_equal(tf_profile_total(p, 0), 4);
	assert_int_equal(tf_profile_total(p, 1), 40000000);
	/* sample 1's stack: location 700 (index 1) then 900 (index 0) */
	assert_int_equal(p->samples.v[0].nlocs, 2);
	assert_int_equal(p->stack.v[p->samples.v[0].locs_off], 1);
	assert_int_equal(p->stack.v[p->samples.v[0].locs_off + 1], 0);
	const tf_location *l = &p->locations.v[1];
	assert_int_equal(l->nlines, 2);
	assert_int_equal(l->mapping, TF_NO_MAPPING);
	assert_string_equal(tf_profile_str(p, p->functions.v[p->lines.v[l->lines_off].function].name), "hot");
	assert_int_equal(p->lines.v[l->lines_off + 1].line, 20);
	assert_int_equal(p->locations.v[0].mapping, 0);
	assert_string_equal(tf_profile_str(p, p->mappings.v[0].filename), "/bin/x");
	assert_int_equal(p->mappings.v[0].flags, TF_MAPPING_HAS_FUNCTIONS | TF_MAPPING_HAS_LINE_NUMBERS);
	assert_string_equal(tf_sample_label_str(p, &p->samples.v[0], "test"), "t1");
	int64_t pid = 0;
	assert_true(tf_sample_label_num(p, &p->samples.v[0], "pid", &pid));
	assert_int_equal(pid, 4242);
	assert_string_equal(tf_profile_meta(p, "event"), "x");
	assert_int_equal(p->period, 10000000);
	assert_string_equal(tf_profile_str(p, p->period_type.unit), "nanoseconds");
	assert_int_equal(p->time_nanos, 1700000000000000000LL);
	assert_int_equal(tf_profile_default_value(p), 1);
	assert_int_equal(p->functions.v[1].start_line, 10);
	tf_profile_free(p);
	tf_buf_free(&b);
}

static void test_missing_reference(void **state)
{
	(void)state;
	tf_buf b = TF_BUF_INIT;
	tf_profile *p = NULL;

	go_style(&b, true);
	assert_int_equal(tf_pprof_decode(&p, b.ptr, b.len), TF_EINVAL);
	assert_null(p);
	assert_non_null(strstr(tf_error_last(), "missing location 901"));
	tf_buf_free(&b);
}

/* Each case: bytes that must be refused, and a word the message must hold. */
static void refuse(const tf_buf *b, const char *word)
{
	tf_profile *p = NULL;
	assert_int_equal(tf_pprof_decode(&p, b->ptr ? b->ptr : "", b->len), TF_EINVAL);
	assert_null(p);
	if (!strstr(tf_error_last(), word))
		fail_msg("expected '%s' in: %s", word, tf_error_last());
}

static void test_refusals(void **state)
{
	(void)state;
	tf_buf b = TF_BUF_INIT, m = TF_BUF_INIT;

	refuse(&b, "no string table");                        /* empty */
	pb_str(&b, "x");
	refuse(&b, "empty string");
	tf_buf_clear(&b);
	pb_str(&b, ""); pb_key(&b, 2, 2); pb_varint(&b, 100);  /* length past the end */
	refuse(&b, "truncated");
	tf_buf_clear(&b);
	pb_str(&b, ""); tf_buf_put(&b, "\x48\xff\xff", 3);     /* varint cut short */
	refuse(&b, "truncated");
	tf_buf_clear(&b);
	pb_str(&b, ""); pb_key(&b, 20, 3);                     /* a group */
	refuse(&b, "truncated or corrupt");
	tf_buf_clear(&b);
	pb_str(&b, ""); pb_uint(&b, 6, 1);                      /* string as varint */
	refuse(&b, "wire type");
	tf_buf_clear(&b);
	pb_str(&b, ""); pb_uint(&m, 1, 5); pb_uint(&m, 2, 0); pb_msg(&b, 1, &m);
	refuse(&b, "sample type 0 names a missing string");
	tf_buf_clear(&b);
	pb_str(&b, ""); pb_uint(&m, 1, 1); pb_uint(&m, 2, 9); pb_msg(&b, 5, &m);
	refuse(&b, "function 1 names a missing string");
	tf_buf_clear(&b);
	pb_str(&b, ""); pb_uint(&m, 1, 1); pb_uint(&m, 2, 3); pb_msg(&b, 4, &m);
	refuse(&b, "missing mapping 3");
	tf_buf_clear(&b);
	pb_str(&b, ""); pb_uint(&m, 1, 4); pb_msg(&b, 5, &m);
	pb_uint(&m, 1, 4); pb_msg(&b, 5, &m);
	refuse(&b, "two functions with id 4");
	tf_buf_clear(&b);
	{
		tf_buf l = TF_BUF_INIT;
		pb_str(&b, ""); pb_uint(&l, 1, 8); pb_uint(&m, 1, 1); pb_msg(&m, 4, &l); pb_msg(&b, 4, &m);
		tf_buf_free(&l);
	}
	refuse(&b, "missing function 8");
	tf_buf_clear(&b);
	pb_str(&b, ""); pb_str(&b, "a"); pb_uint(&m, 1, 1); pb_uint(&m, 2, 1); pb_msg(&b, 1, &m);
	pb_uint(&m, 2, 5); pb_uint(&m, 2, 6); pb_msg(&b, 2, &m);
	refuse(&b, "2 values for 1 sample types");
	tf_buf_clear(&b);
	pb_str(&b, ""); pb_uint(&m, 1, 1); pb_uint(&m, 2, 77); pb_msg(&b, 11, &m);
	refuse(&b, "period type");
	tf_buf_clear(&b);
	pb_str(&b, ""); pb_uint(&b, 13, 3);
	refuse(&b, "comment 0");
	tf_buf_clear(&b);
	{
		tf_buf l = TF_BUF_INIT;
		pb_str(&b, ""); pb_uint(&l, 1, 0); pb_uint(&l, 2, 44); pb_msg(&m, 3, &l); pb_msg(&b, 2, &m);
		tf_buf_free(&l);
	}
	refuse(&b, "label naming a missing string");
	tf_buf_clear(&b);
	/* values whose magnitudes add up past 2^52: refused, never summed
	 * into an overflow (found by fuzzing) */
	pb_str(&b, ""); pb_str(&b, "cpu"); pb_uint(&m, 1, 1); pb_uint(&m, 2, 1); pb_msg(&b, 1, &m);
	pb_uint(&m, 2, (uint64_t)1 << 51); pb_msg(&b, 2, &m);
	pb_uint(&m, 2, (uint64_t)-((int64_t)1 << 51) - 1); pb_msg(&b, 2, &m);
	refuse(&b, "the values of 'cpu' add up to more than 2^52");
	tf_buf_free(&b);
	tf_buf_free(&m);
}

/* Random profiles through protobuf-c's encoder and back through ours. */
static void test_random_round_trips(void **state)
{
	(void)state;
	srand(7);
	for (int round = 0; round < 40; round++) {
		tf_profile *p, *q;
		tf_buf b = TF_BUF_INIT;
		uint32_t fns[20], locs[30], stack[12];
		int nf = 1 + rand() % 20, nl = 1 + rand() % 30;

		tf_profile_new(&p);
		tf_profile_set_merge(p, false);
		tf_profile_add_sample_type(p, "samples", "count");
		if (round % 2)
			tf_profile_add_sample_type(p, "wall", "nanoseconds");
		tf_mapping mp = { 0x1000, 0x9000, 0, tf_profile_intern(p, "/lib/x.so"),
				  tf_profile_intern(p, "beef"), TF_MAPPING_HAS_FUNCTIONS };
		uint32_t map = tf_profile_add_mapping(p, &mp);
		for (int i = 0; i < nf; i++) {
			char name[32], file[32];
			snprintf(name, sizeof(name), "fn%d_%d", i, rand() % 1000);
			snprintf(file, sizeof(file), "f%d.c", rand() % 4);
			fns[i] = tf_profile_function(p, name, file, rand() % 500);
		}
		for (int i = 0; i < nl; i++) {
			tf_line lines[3];
			uint32_t n = 1 + (uint32_t)(rand() % 3);
			for (uint32_t k = 0; k < n; k++) {
				lines[k].function = fns[rand() % nf];
				lines[k].line = rand() % 900;
				lines[k].column = 0;
			}
			locs[i] = tf_profile_add_location(p, rand() % 3 ? map : TF_NO_MAPPING,
							  0x1000 + (uint64_t)i * 8, lines, rand() % 5 ? n : 0);
		}
		int ns = rand() % 200;
		for (int i = 0; i < ns; i++) {
			uint32_t depth = (uint32_t)(rand() % 12);
			for (uint32_t k = 0; k < depth; k++)
				stack[k] = locs[rand() % nl];
			tf_label lab[2] = {
				{ tf_profile_intern(p, "test"), tf_profile_intern(p, rand() % 2 ? "a" : "b"), 0, 0 },
				{ tf_profile_intern(p, "tid"), 0, rand() % 50, 0 },
			};
			int64_t v[2] = { 1 + rand() % 5, (int64_t)rand() * 1000 };
			tf_profile_add_sample(p, stack, depth, v, lab, (uint32_t)(rand() % 3));
		}
		tf_profile_set_meta(p, "round", "x");
		p->period = round;
		assert_int_equal(tf_pprof_encode(&b, p, round % 3 ? 6 : 0), 0);
		assert_int_equal(tf_pprof_decode(&q, b.ptr, b.len), 0);
		assert_int_equal(tf_profile_validate(q), 0);
		assert_int_equal(q->samples.n, p->samples.n);
		assert_int_equal(q->locations.n, p->locations.n);
		assert_int_equal(q->functions.n, p->functions.n);
		assert_int_equal(q->lines.n, p->lines.n);
		assert_int_equal(q->stack.n, p->stack.n);
		assert_int_equal(q->labels.n, p->labels.n);
		assert_int_equal(q->strings.strs.n, p->strings.strs.n);
		assert_memory_equal(q->stack.v, p->stack.v, p->stack.n * sizeof(uint32_t));
		assert_memory_equal(q->values.v, p->values.v, p->values.n * sizeof(int64_t));
		for (size_t i = 0; i < p->lines.n; i++) {
			assert_int_equal(q->lines.v[i].function, p->lines.v[i].function);
			assert_int_equal(q->lines.v[i].line, p->lines.v[i].line);
		}
		for (size_t i = 0; i < p->locations.n; i++) {
			assert_int_equal(q->locations.v[i].mapping, p->locations.v[i].mapping);
			assert_int_equal(q->locations.v[i].address, p->locations.v[i].address);
			assert_int_equal(q->locations.v[i].nlines, p->locations.v[i].nlines);
		}
		for (size_t i = 0; i < p->labels.n; i++) {
			assert_int_equal(q->labels.v[i].num, p->labels.v[i].num);
			assert_string_equal(tf_profile_str(q, q->labels.v[i].str),
					    tf_profile_str(p, p->labels.v[i].str));
		}
		assert_string_equal(tf_profile_meta(q, "round"), "x");
		assert_int_equal(q->period, round);
		tf_profile_free(p);
		tf_profile_free(q);
		tf_buf_free(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foreign_layout),
		cmocka_unit_test(test_missing_reference),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_random_round_trips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

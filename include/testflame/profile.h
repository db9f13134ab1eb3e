/*
 * profile.h - the in-memory profile, testflame's hub data structure, and its
 * codecs (pprof, folded stacks, speedscope).
 *
 * Per-function aggregation and the text report are in aggregate.h.
 *
 * The model mirrors pprof's profile.proto so that run files round-trip
 * without loss, but with dense 0-based indices instead of ids: functions,
 * locations, mappings and samples live in flat arrays, strings in one
 * interning table. Read access is by the public fields (iterate freely);
 * changes go through the tf_profile_* functions, which keep the
 * deduplication indices right.
 *
 * Sample stacks are leaf first (pprof order). A location may carry several
 * lines: lines[0] is the innermost inlined function, the last one the
 * function it was inlined into.
 */
#ifndef TESTFLAME_PROFILE_H
#define TESTFLAME_PROFILE_H

#include "testflame/common.h"

typedef uint32_t tf_strid;

typedef struct {
	tf_strid type, unit;
} tf_value_type;

typedef struct {
	tf_strid name, system_name, filename;
	int64_t start_line;
} tf_function;

typedef struct {
	uint32_t function; /* index into functions */
	int64_t line;
	int64_t column;
} tf_line;

enum {
	TF_MAPPING_HAS_FUNCTIONS = 1,
	TF_MAPPING_HAS_FILENAMES = 2,
	TF_MAPPING_HAS_LINE_NUMBERS = 4,
	TF_MAPPING_HAS_INLINE_FRAMES = 8,
};

typedef struct {
	uint64_t memory_start, memory_limit, file_offset;
	tf_strid filename, build_id;
	uint32_t flags;
} tf_mapping;

#define TF_NO_MAPPING UINT32_MAX

typedef struct {
	uint32_t mapping; /* index into mappings, or TF_NO_MAPPING */
	uint64_t address;
	uint32_t lines_off, nlines; /* into profile->lines */
	bool is_folded;
} tf_location;

typedef struct {
	tf_strid key, str; /* str == 0 for a numeric label */
	int64_t num;
	tf_strid num_unit;
} tf_label;

typedef struct {
	uint32_t locs_off, nlocs;     /* into profile->stack, leaf first */
	uint32_t labels_off, nlabels; /* into profile->labels */
	/* values are profile->values[i * nsample_types ...] */
} tf_sample;

typedef struct tf_profile {
	tf_strtab strings;
	TF_VEC(tf_value_type) sample_types;
	TF_VEC(tf_function) functions;
	TF_VEC(tf_line) lines;
	TF_VEC(tf_location) locations;
	TF_VEC(tf_mapping) mappings;
	TF_VEC(tf_sample) samples;
	TF_VEC(uint32_t) stack;  /* location indices of all samples */
	TF_VEC(int64_t) values;  /* nsample_types per sample */
	TF_VEC(tf_label) labels;
	TF_VEC(tf_strid) comments;
	tf_value_type period_type;
	int64_t period;
	int64_t time_nanos, duration_nanos;
	int64_t drop_frames, keep_frames; /* string ids, as in pprof */
	tf_strid default_sample_type, doc_url;

	/* private: deduplication indices, built lazily */
	tf_htab fn_index, loc_index, sample_index;
	bool merge_samples;
	/* the gzip pprof file it was loaded from, and the tables' fingerprint
	 * then (see tf_profile_source) */
	tf_buf source;
	uint64_t source_print;
} tf_profile;

/* A new empty profile. Samples with equal stacks and labels are merged
 * (values summed) unless tf_profile_set_merge(p, false). */
int tf_profile_new(tf_profile **out);
void tf_profile_free(tf_profile *p);
void tf_profile_set_merge(tf_profile *p, bool merge);

static inline const char *tf_profile_str(const tf_profile *p, tf_strid id)
{
	return id < p->strings.strs.n ? p->strings.strs.v[id] : "";
}
tf_strid tf_profile_intern(tf_profile *p, const char *s);
tf_strid tf_profile_intern_len(tf_profile *p, const char *s, size_t len);

/* The sample types of the time a run's tests waited (off-CPU) and of their
 * wall time, CPU plus off-CPU, both in nanoseconds, where a run recorded
 * them (attribute.h). */
#define TF_OFFCPU_TYPE "off-cpu"
#define TF_WALL_TYPE "wall"

/* Append a sample type ("cpu", "nanoseconds"); returns its index. */
size_t tf_profile_add_sample_type(tf_profile *p, const char *type, const char *unit);
/* Index of the sample type named `type`, or -1. */
int tf_profile_find_sample_type(const tf_profile *p, const char *type);

/* Deduplicated by all fields. */
uint32_t tf_profile_add_function(tf_profile *p, tf_strid name, tf_strid system_name,
				 tf_strid filename, int64_t start_line);
/* Convenience: intern the strings, then add. */
uint32_t tf_profile_function(tf_profile *p, const char *name, const char *filename,
			     int64_t start_line);
uint32_t tf_profile_add_mapping(tf_profile *p, const tf_mapping *m);
/* Whether two locations show the same functions (inlined ones included,
 * lines aside), and a hash of that sequence, seeded with `seed`. */
bool tf_location_same_functions(const tf_profile *p, const tf_location *a, const tf_location *b);
uint64_t tf_location_functions_hash(const tf_profile *p, const tf_location *l, uint64_t seed);
/* Deduplicated by (mapping, address) when address != 0, else by lines. */
uint32_t tf_profile_add_location(tf_profile *p, uint32_t mapping, uint64_t address,
				 const tf_line *lines, uint32_t nlines);
/* Add (or merge into) a sample; `values` has nsample_types entries. */
uint32_t tf_profile_add_sample(tf_profile *p, const uint32_t *locs, uint32_t nlocs,
			       const int64_t *values, const tf_label *labels,
			       uint32_t nlabels);
/* The hash of a stack, for callers that hash it once for several uses. */
static inline uint64_t tf_profile_stack_hash(const uint32_t *locs, uint32_t nlocs)
{
	return tf_hash_bytes(locs, nlocs * sizeof(*locs), nlocs);
}
/* tf_profile_add_sample with the stack's tf_profile_stack_hash() given. */
uint32_t tf_profile_add_sample_hashed(tf_profile *p, uint64_t stack_hash, const uint32_t *locs,
				      uint32_t nlocs, const int64_t *values,
				      const tf_label *labels, uint32_t nlabels);

/* Label lookup on a sample: the string value (NULL if absent). */
const char *tf_sample_label_str(const tf_profile *p, const tf_sample *s, const char *key);
/* The numeric value; returns false if absent. */
bool tf_sample_label_num(const tf_profile *p, const tf_sample *s, const char *key,
			 int64_t *out);
static inline const int64_t *tf_sample_values(const tf_profile *p, size_t i)
{
	return p->values.v + i * p->sample_types.n;
}

/* Metadata: comments of the form "testflame.KEY=VALUE". Setting a key that
 * exists replaces its value. tf_profile_meta() returns NULL if absent. */
void tf_profile_set_meta(tf_profile *p, const char *key, const char *value);
/* tf_profile_set_meta of n keys at once, in time linear in the comments
 * and keys (a suite's tests are thousands of keys). */
void tf_profile_set_metas(tf_profile *p, char *const *keys, char *const *values, size_t n);
const char *tf_profile_meta(const tf_profile *p, const char *key);
/* Which testflame wrote a run file, "testflame 0.1.0 (commit 5b9f97c3a1b2,
 * dirty)" from its version and build metadata, into buf; NULL when the
 * file does not say (another tool's profile). */
const char *tf_profile_made_by(char *buf, size_t n, const tf_profile *p);
/* What its numbers mean (TF_MEASURE_VERSION when written; 1 for run files
 * from before it was recorded, 0 for another tool's profile). */
long tf_profile_measure(const tf_profile *p);

/* Total of one value column over all samples. */
int64_t tf_profile_total(const tf_profile *p, size_t value_index);

/*
 * The most a value column may add up to (of the values' magnitudes): 2^52,
 * 52 days of CPU in nanoseconds, so that sums over up to TF_MAX_RUNS
 * profiles stay within int64. Decoders refuse a file beyond it (a count
 * near 2^63 in a folded file, say) rather than overflow later.
 */
#define TF_PROFILE_TOTAL_MAX (INT64_C(1) << 52)
int tf_profile_check_totals(const tf_profile *p);

/* The value column a viewer shows by default: default_sample_type when it
 * names a sample type, else the last one (pprof's rule); -1 if none. */
int tf_profile_default_value(const tf_profile *p);
/* Resolve a user's --value: a sample type ("cpu"), "type/unit", or the
 * column's index; NULL or "" means the default. Error lists the choices. */
int tf_profile_value_index(size_t *out, const tf_profile *p, const char *spec);

/*
 * Which samples carry label `key` = `value` (a string label): one byte per
 * sample, 1 for a match. Names are compared as strings, so a foreign file
 * whose string table repeats a string still matches. Free with free().
 */
uint8_t *tf_profile_label_mask(const tf_profile *p, const char *key, const char *value);
/*
 * A new profile holding only the samples whose mask byte is set (all of
 * them when `mask` is NULL), with only the functions, locations, mappings
 * and strings those samples use. Sample types, period, times and comments
 * are kept.
 */
int tf_profile_select(tf_profile **out, const tf_profile *p, const uint8_t *mask);

/*
 * Repeated runs of one suite in one run file (a baseline saved from
 * `run --repeat N`): every sample of run i (from 1) gets the string label
 * run=i, the header and comments are the first run's, and the metadata
 * "runs" says how many there are. tf_profile_count_runs() reads it (1 for
 * an ordinary profile); tf_profile_split_runs() gives the runs back as
 * separate profiles (one copy for an ordinary profile), which the caller
 * frees, each and the array.
 */
#define TF_RUN_LABEL "run"
#define TF_MAX_RUNS 1000
int tf_profile_join_runs(tf_profile **out, const tf_profile *const *runs, size_t n);
size_t tf_profile_count_runs(const tf_profile *p);
/*
 * Parts of one run recorded apart (the shards of a suite, each run by its
 * own CI job) as one run: every part's samples and per-test lines, the
 * first part's header and metadata, the durations summed. The parts must
 * have the same sample types (TF_EINVAL). Tests keep their names: the
 * caller checks that no two parts hold the same test.
 */
int tf_profile_join_parts(tf_profile **out, const tf_profile *const *parts, size_t n);
int tf_profile_split_runs(tf_profile ***out, size_t *n, const tf_profile *p);

/*
 * Human-readable values in pprof's style: "1.85s", "120ms", "3.50MB", or a
 * plain number for counts and unknown units. tf_value_format() picks the
 * scale that suits `value`; a table picks one scale for a whole column with
 * tf_value_scale() (of its smallest value, say, as pprof does) and prints
 * every cell with tf_value_format_in(). Both return buf.
 */
const char *tf_value_format(char *buf, size_t size, int64_t value, const char *unit);
/* The scale suffix ("ms", "MB") for `value` in `unit`; NULL for counts. */
const char *tf_value_scale(int64_t value, const char *unit);
const char *tf_value_format_in(char *buf, size_t size, int64_t value, const char *unit,
			       const char *suffix);

/* Basic consistency check (indices in range); used after decoding. */
int tf_profile_validate(const tf_profile *p);

/*
 * Codecs. Readers accept what other tools write; writers write atomically.
 */
typedef enum {
	TF_FORMAT_UNKNOWN = 0,
	TF_FORMAT_PPROF,   /* protobuf, gzip or not */
	TF_FORMAT_FOLDED,  /* "a;b;c 42" lines */
} tf_profile_format;

/* Decode a pprof protobuf (gzip-compressed or raw). */
int tf_pprof_decode(tf_profile **out, const void *data, size_t len);
/* Encode to a gzip-compressed pprof in memory. */
int tf_pprof_encode(tf_buf *out, const tf_profile *p, int gzip_level);
int tf_pprof_write(const tf_profile *p, const char *path);

/* Folded stacks: one "root;...;leaf COUNT" per line (FlameGraph's format).
 * A line with two counts ("stack BASE HEAD", difffolded.pl) is read as two
 * sample types "base" and "head". Frames may carry an annotation suffix. */
int tf_folded_decode(tf_profile **out, const char *text, size_t len, const char *name);
/* Write folded stacks of value column `value_index`; if `label_key` is set,
 * only samples whose label equals `label_value`. */
int tf_folded_write(tf_buf *out, const tf_profile *p, size_t value_index,
		    const char *label_key, const char *label_value);

/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile per test label (or a single one when the samples
 * carry no test label), frames shared between them, stacks merged. Only
 * positive values are written, as speedscope requires. `test` (may be NULL)
 * keeps one test; `name` names the file in speedscope's title bar.
 */
int tf_speedscope_write(tf_buf *out, const tf_profile *p, size_t value_index,
			const char *test, const char *name);

/* Load any supported profile file, sniffing its format. */
int tf_profile_load(tf_profile **out, const char *path);
/*
 * The bytes of the gzip pprof file the profile was loaded from, while its
 * tables are as they were decoded (same sizes, values and labels); NULL
 * when it was not loaded from one or has changed since. For copies of a
 * run (the report's base.pb.gz): re-encoding costs a gzip of the whole
 * file, and a copy is better served as the file itself.
 */
const tf_buf *tf_profile_source(const tf_profile *p);
tf_profile_format tf_profile_sniff(const void *data, size_t len);

/* gzip helpers (zlib lives in the profile codec). */
bool tf_is_gzip(const void *data, size_t len);
int tf_gunzip(tf_buf *out, const void *data, size_t len, const char *what);
int tf_gzip(tf_buf *out, const void *data, size_t len, int level);

#endif

/*
 * aggregate.h - what a profile costs where: per-function self and total
 * (flat and cum in pprof's words), per-label totals (per test, per process),
 * and the text "top" report built on them.
 *
 * Aggregates copy the names they return, so they outlive the profile they
 * were computed from: a comparison can aggregate base and head, free both
 * profiles and join the two tables by name.
 *
 * Conventions as pprof's: a sample's value counts as self for the innermost
 * frame of its leaf location, and as total once for every distinct function
 * on its stack (recursion does not count twice). Inlined frames are frames.
 * A location without symbols is a frame named by its address ("0x4a5f20"),
 * with its mapping's file name as file name.
 */
#ifndef TESTFLAME_AGGREGATE_H
#define TESTFLAME_AGGREGATE_H

#include "testflame/profile.h"

typedef enum {
	TF_AGG_FUNCTION = 0,  /* one entry per function name (go tool pprof's default) */
	TF_AGG_FILE_FUNCTION, /* per function name and file name */
	TF_AGG_LINE,          /* per function name, file name and line */
} tf_agg_granularity;

typedef struct {
	size_t value;              /* value column */
	const uint8_t *mask;       /* NULL, or only samples whose byte is set
				    * (tf_profile_label_mask) */
	tf_agg_granularity granularity;
} tf_agg_options;

typedef struct {
	const char *name;     /* owned by the aggregate */
	const char *filename; /* "" when unknown */
	int64_t line;         /* TF_AGG_LINE: the line; else the function's start line (0 unknown) */
	int64_t self, total;
} tf_agg_entry;

typedef struct tf_aggregate {
	tf_agg_entry *entries;
	size_t n;
	int64_t total;   /* value of the selected samples */
	size_t nsamples; /* selected sample records with a non-zero value */
	tf_agg_granularity granularity;
	/* private */
	tf_strtab strings;
	tf_htab index;
	size_t cap;
} tf_aggregate;

typedef enum {
	TF_AGG_BY_SELF = 0, /* self, then name: pprof -top */
	TF_AGG_BY_TOTAL,    /* total, then name: pprof -top -cum */
	TF_AGG_BY_NAME,
} tf_agg_order;

/* Aggregate `p` (entries in no particular order until sorted). */
int tf_aggregate_new(tf_aggregate **out, const tf_profile *p, const tf_agg_options *opts);
void tf_aggregate_sort(tf_aggregate *a, tf_agg_order order);
/* The entry for a function (filename and line count only at the finer
 * granularities); NULL if absent. */
const tf_agg_entry *tf_aggregate_find(const tf_aggregate *a, const char *name,
				      const char *filename, int64_t line);
void tf_aggregate_free(tf_aggregate *a);

/*
 * Per-label totals: samples grouped by the string value of label `key`.
 * For each group, every value column summed, the number of sample records,
 * and for each of `count_keys` the number of distinct values that label
 * takes in the group (e.g. "pid", "tid": processes and threads).
 */
#define TF_GROUP_MAX_COUNTS 4
typedef struct {
	const char *value;   /* the label's value; NULL for samples without the label */
	int64_t *sums;       /* one per sample type */
	size_t records;
	size_t distinct[TF_GROUP_MAX_COUNTS];
} tf_label_group;

typedef struct tf_label_groups {
	tf_label_group *groups; /* sorted by the default value column, largest first */
	size_t n;
	bool any_labelled;      /* some sample had the label */
	/* private */
	tf_arena *arena;
} tf_label_groups;

int tf_label_groups_new(tf_label_groups **out, const tf_profile *p, const char *key,
			const char *const *count_keys, size_t ncount);
void tf_label_groups_free(tf_label_groups *g);

/*
 * The text report of `go tool pprof -top`: a short header (value type,
 * total, selection), then "flat flat% sum% cum cum% name" rows.
 */
typedef struct {
	size_t value;         /* value column */
	const uint8_t *mask;  /* sample selection, or NULL */
	const char *selection;/* said in the header when set ("test 'x'") */
	size_t top;           /* rows; 0 for all */
	bool by_total;        /* sort by cum */
} tf_top_options;

int tf_top_write(tf_buf *out, const tf_profile *p, const tf_top_options *opts);

#endif

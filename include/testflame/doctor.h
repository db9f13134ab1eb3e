/*
 * doctor.h - what this machine and this checkout allow testflame to do,
 * and the exact fix for each thing in the way (`testflame doctor`).
 *
 * The engine runs the checks and returns them as data, one verdict each;
 * the command prints them. Sampling checks come from tf_record_probe(), so
 * the doctor's verdict is what `testflame record --sampler auto` would do.
 */
#ifndef TESTFLAME_DOCTOR_H
#define TESTFLAME_DOCTOR_H

#include "testflame/common.h"
#include "testflame/record.h"

typedef enum {
	TF_CHECK_OK = 0,
	TF_CHECK_WARN,     /* works, with less than it could */
	TF_CHECK_PROBLEM,  /* something testflame needs is missing */
} tf_check_level;

typedef struct {
	const char *name;     /* "perf_event_open", "ptrace", "debug info", ... */
	tf_check_level level;
	char *summary;        /* what was found */
	char *fix;            /* the exact fix, or NULL when none is needed */
} tf_check;

typedef struct {
	char *const *binaries;   /* programs (paths or PATH names) to check for debug info */
	const char *dir;         /* where to look for the git repository (NULL: ".") */
	unsigned freq;           /* the sampling rate to check limits against (default TF_DEFAULT_FREQ) */
	char *const *envp;       /* the environment to read CI facts from (NULL: environ) */
} tf_doctor_opts;

typedef struct {
	TF_VEC(tf_check) checks;
	tf_record_caps caps;
	bool can_sample;         /* perf or ptrace works */
	size_t program_problems; /* programs given that cannot be profiled well:
				  * missing, not ELF, stripped */
	tf_sampler sampler;      /* what --sampler auto would use */
} tf_doctor_report;

void tf_doctor_opts_init(tf_doctor_opts *o);
/* Run every check; never fails for what it finds, only for bad options. */
int tf_doctor_run(tf_doctor_report **out, const tf_doctor_opts *o);
void tf_doctor_report_free(tf_doctor_report *r);
const char *tf_check_level_name(tf_check_level l); /* "ok", "warning", "problem" */

/*
 * The debug information of one ELF file, for the "debug info" check:
 * whether it has a symbol table, DWARF (in the file or in a separate debug
 * file found by build-id or .gnu_debuglink), and its build-id.
 */
typedef struct {
	bool elf;
	bool symtab;         /* .symtab: all functions have names */
	bool dynsym_only;    /* stripped: exported functions only */
	bool dwarf;          /* .debug_info (or .zdebug_info) in the file */
	char *debug_file;    /* a separate debug file found for it, or NULL */
	char build_id[41];   /* hex, "" if none */
	bool script;         /* "#!": an interpreter runs it */
} tf_debuginfo;
int tf_doctor_debuginfo(tf_debuginfo *out, const char *path);
void tf_debuginfo_clear(tf_debuginfo *d);

#endif

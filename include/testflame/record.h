/*
 * record.h - running a command under a sampler and getting its events back.
 *
 * A sampler (perf_event, or ptrace where perf is refused) writes everything
 * it observes into a spool file in the kernel's perf record layout: samples,
 * and the side-band that gives them meaning (mmaps, comms, forks, exits).
 * After the run, tf_recording_replay() hands the events back in time order
 * as decoded tf_rec_event structs, for the symbolizer and the attribution
 * stage to consume. The spool lives in an unlinked temp file, so a long
 * suite costs disk, not memory.
 */
#ifndef TESTFLAME_RECORD_H
#define TESTFLAME_RECORD_H

#include "testflame/common.h"

#include <sys/types.h>

/*
 * The default sampling rate. Every test's cost comes from exact measures
 * where the system gives them (attribute.h); samples say where inside a test
 * the cost went. 249 Hz costs a CPU-bound suite under 1% of CPU (DWARF
 * stacks included; BENCHMARKS.md), where 999 Hz costs 3% and more, and
 * gives a test of 40 ms ten samples.
 */
#define TF_DEFAULT_FREQ 249

typedef enum {
	TF_EVENT_AUTO = 0,
	TF_EVENT_CPU_CLOCK,
	TF_EVENT_INSTRUCTIONS,
	TF_EVENT_CYCLES,
	TF_EVENT_WALL,
} tf_event;

typedef enum {
	TF_SAMPLER_AUTO = 0,
	TF_SAMPLER_PERF,
	TF_SAMPLER_PTRACE,
} tf_sampler;

/* How perf events reach the command's processes: by a cgroup of the
 * command's own where the machine allows it (auto), required (cgroup), or
 * copied into every new process, as `perf record` does (inherit). */
typedef enum {
	TF_FOLLOW_AUTO = 0,
	TF_FOLLOW_CGROUP,
	TF_FOLLOW_INHERIT,
} tf_follow;

/* Off-CPU recording (perf sampler): every switch-out of the command's
 * threads with its stack, which the attribution turns into the time each
 * thread waited (attribute.h). auto: where the kernel allows it. */
typedef enum {
	TF_OFFCPU_AUTO = 0,
	TF_OFFCPU_ON,
	TF_OFFCPU_OFF,
} tf_offcpu;

/* The default cap of off-CPU stacks: switch-outs recorded per second of
 * each CPU's time. Beyond it, one switch-out in N is recorded and stands
 * for N (perf.c); below it, every one is. */
#define TF_OFFCPU_MAX_RATE 2000

typedef enum {
	TF_CALLGRAPH_AUTO = 0,
	TF_CALLGRAPH_FP,
	TF_CALLGRAPH_DWARF,
} tf_callgraph;

/* The names of the events, samplers and call-graph modes: the one list the
 * options, the config and the run files use. NULL-terminated, in the
 * order of the enums (a name's index is its value). */
extern const char *const tf_event_names[];
extern const char *const tf_sampler_names[];
extern const char *const tf_callgraph_names[];
extern const char *const tf_follow_names[];
extern const char *const tf_offcpu_names[];
const char *tf_event_name(tf_event e);         /* "cpu-clock", ... */
const char *tf_sampler_name(tf_sampler s);
const char *tf_callgraph_name(tf_callgraph c);
/* Parse a name of the lists above; TF_EUSAGE for another. */
int tf_event_parse(tf_event *out, const char *s);
int tf_sampler_parse(tf_sampler *out, const char *s);
int tf_callgraph_parse(tf_callgraph *out, const char *s);
int tf_follow_parse(tf_follow *out, const char *s);
int tf_offcpu_parse(tf_offcpu *out, const char *s);
/* The pprof value type of an event: ("cpu","nanoseconds"), ... */
void tf_event_value_type(tf_event e, const char **type, const char **unit);

typedef struct {
	uint64_t elapsed_ns;
	uint64_t samples;
	uint64_t processes; /* seen so far */
	uint64_t lost;
} tf_record_progress;

/* Live side-band: called during the run, as records are read, so that
 * files can be pinned before the workload deletes them (see symbolize.h). */
struct tf_rec_event;
typedef void (*tf_live_fn)(void *ctx, const struct tf_rec_event *ev);

typedef struct {
	char *const *argv;          /* the command */
	char *const *extra_env;     /* "KEY=VALUE" added to the command's env */
	const char *cwd;            /* run the command there (NULL: here) */
	tf_event event;
	tf_sampler sampler;
	tf_callgraph callgraph;
	tf_follow follow;
	tf_offcpu offcpu;
	unsigned offcpu_max;        /* switch-outs a second per CPU recorded with
				     * their stacks; 0: TF_OFFCPU_MAX_RATE */
	unsigned freq;              /* Hz, default TF_DEFAULT_FREQ */
	unsigned stack_bytes;       /* user stack copied per sample (DWARF) */
	tf_notice_fn notice;
	void *notice_ctx;
	void (*progress)(void *ctx, const tf_record_progress *p);
	void *progress_ctx;
	tf_live_fn live;
	void *live_ctx;
	/* A directory the command writes into for testflame (the runners'
	 * reports), which testflame removes itself after the run: when
	 * testflame dies during the run, the guard removes it (may be NULL). */
	const char *scratch_dir;
	/* Test markers: when set, a file created for the run whose path the
	 * command finds in $TESTFLAME_MARKERS (see markers.c for the protocol). */
	bool markers;
	/* Python frames: read the interpreter's own stack of every sampled
	 * thread of a CPython process (see pyread.c) */
	bool python;
	/* Memory: preload the allocation sampler into the command's
	 * processes (alloc.c), sampling one allocation per `alloc_rate` bytes
	 * on average (0: TF_DEFAULT_ALLOC_RATE) */
	bool memory;
	unsigned alloc_rate;
} tf_record_opts;

/* The allocation sampler's mean distance between samples, in bytes
 * allocated: tcmalloc's and jemalloc's. */
#define TF_DEFAULT_ALLOC_RATE (512 * 1024)

void tf_record_opts_init(tf_record_opts *o);

typedef struct {
	tf_event event;             /* the event actually sampled */
	tf_sampler sampler;         /* the sampler actually used */
	tf_callgraph callgraph;     /* as requested (auto stays auto) */
	char rung[96];              /* "perf kernel+user", "perf user-only", ... */
	bool kernel;                /* kernel frames were recorded */
	bool by_cgroup;             /* the events followed the command's cgroup */
	/* off-CPU: switch-outs were recorded with their stacks (perf), or
	 * waiting threads sampled (ptrace --event wall); how many, and the
	 * most switch-outs one of them stood for (1: every one recorded) */
	bool offcpu;
	uint64_t offcpu_samples, offcpu_period_max;
	char offcpu_why[160];       /* why not, when asked for and refused */
	unsigned freq;
	pid_t root_pid;
	int wait_status;            /* as from waitpid() */
	int exit_status;            /* shell style: code, or 128+signal */
	bool exec_failed;           /* the command could not be started */
	bool stopped;               /* recording failed while the command ran (its
				     * spool's disk full, the spool's limit): it
				     * ran on to its end unrecorded */
	bool interrupted;           /* SIGINT/SIGTERM reached testflame */
	uint64_t start_ns, end_ns;  /* CLOCK_MONOTONIC */
	uint64_t start_realtime_ns;
	uint64_t samples, lost, throttled;
	uint64_t records, spool_bytes;
	uint64_t markers_ignored;   /* marker lines that were not understood */
	uint64_t thread_costs;      /* threads whose exact cost was recorded */
	/* Python (pyread.c): samples of CPython processes whose Python stack
	 * was read, and those whose was not (an interpreter whose layout is
	 * unknown, a read that did not hold together); the interpreters met,
	 * "3.11.2" each, an unreadable one with why */
	uint64_t py_stacks, py_unread;
	char py_versions[160];
	/* Memory (opts.memory): process images that ran the allocation
	 * sampler, its samples, its files that did not read; the command's
	 * cgroup's peak memory (memory.peak, bytes; 0 unknown); the mean
	 * bytes between samples of a thread that allocates much */
	bool memory;
	uint64_t alloc_rate;
	uint64_t alloc_processes, alloc_samples, alloc_bad_files;
	uint64_t alloc_pooled;   /* processes whose file was made ahead by testflame */
	uint64_t cgroup_peak;
} tf_record_info;

typedef struct tf_recording tf_recording;

/*
 * Run the command under the sampler until it exits. Returns 0 even when the
 * command fails (see info->exit_status); an error only when testflame could
 * not record at all. With exec_failed set, the message is in
 * tf_error_last() and exit_status is 127 (not found) or 126. With stopped
 * set, the message is in tf_error_last(), exit_status is the command's, and
 * the recording must not be used.
 */
int tf_record_run(tf_recording **out, const tf_record_opts *opts);
void tf_recording_free(tf_recording *r);
const tf_record_info *tf_recording_info(const tf_recording *r);

/* Decoded events, as replay hands them out (pointers valid in the callback). */
typedef enum {
	TF_REC_SAMPLE = 1,
	TF_REC_MMAP,     /* a mapping appeared (MMAP2) */
	TF_REC_COMM,     /* a thread got a name; exec = true when by execve */
	TF_REC_FORK,     /* a process or thread was created */
	TF_REC_EXIT,     /* a process or thread ended */
	TF_REC_LOST,     /* the kernel dropped records */
	TF_REC_THROTTLE, /* the kernel throttled sampling */
	TF_REC_PROC_EXIT,/* a process exited with a known status (testflame's own) */
	TF_REC_MARKER,   /* the suite said a test began or ended */
	TF_REC_CMDLINE,  /* the argv of a process, read at its exec */
	TF_REC_THREAD_COST, /* a thread ended: its exact count of the event */
	TF_REC_SWITCH,   /* a thread went on (in) or off (out) a CPU */
	TF_REC_PYCODE,   /* a Python code object, first met (python.h) */
	TF_REC_PYSTACK,  /* the Python stack of the next sample of `tid` */
	TF_REC_ALLOC,    /* a sampled allocation: `sample`, with sample.alloc */
	TF_REC_ALLOC_FREE,  /* a sampled block freed: alloc_free */
	TF_REC_ALLOC_COUNT, /* a thread's allocations since its last count */
	TF_REC_ALLOC_PROC,  /* a process image ran the allocation sampler */
	TF_REC_NOTE,     /* a sentence for the run's notes */
	TF_REC_RSS,      /* the peak RSS of a process image the sampler was not in */
	TF_REC_OFFCPU,   /* `tid` went off its CPU: its stack then (sample
			  * fields; period: the switch-outs it stands for) */
	TF_REC_OFFCPU_PERIOD, /* (replay's own: not handed out) */
	TF_REC_PEEK,     /* testflame read process `pid`'s memory from `time`
			  * to peek.end (its mmap lock held then) */
} tf_rec_type;

/* What a sampled allocation was (TF_REC_ALLOC). */
typedef struct {
	uint64_t size;        /* bytes asked for */
	uint64_t ptr;         /* the block */
	uint64_t rate;        /* mean bytes between samples: what it stands for */
} tf_alloc_info;

/* Scope of a test marker. */
typedef enum {
	TF_MARKER_GLOBAL = 0, /* every thread of the tree */
	TF_MARKER_PROCESS,    /* every thread of process `pid` */
	TF_MARKER_THREAD,     /* thread `tid` */
} tf_marker_scope;

/* Where a sample was taken. */
enum {
	TF_SAMPLE_USER = 0,
	TF_SAMPLE_KERNEL = 1,
};

typedef struct tf_rec_event {
	tf_rec_type type;
	uint64_t time;        /* CLOCK_MONOTONIC ns */
	uint32_t pid, tid, cpu;
	union {
		struct {
			uint64_t ip;
			uint64_t period;        /* event units (ns for clocks) */
			int where;              /* TF_SAMPLE_USER / KERNEL */
			/* callchain split by context, leaf first, markers removed */
			const uint64_t *kernel_ips;
			uint32_t nkernel;
			const uint64_t *user_ips; /* frame-pointer chain, [0] = ip */
			uint32_t nuser;
			bool user_truncated;    /* chain hit the kernel's depth limit */
			/* DWARF mode: user registers (perf_regs x86 order) and stack */
			const uint64_t *regs;
			uint64_t regs_mask;
			const uint8_t *stack;
			uint64_t stack_size;
			/* off-CPU samples of --event wall: what the thread waits in */
			const char *offcpu;     /* e.g. "read", NULL when on-CPU */
			/* an allocation (TF_REC_ALLOC); NULL for a CPU sample */
			const tf_alloc_info *alloc;
		} sample;
		struct {
			uint64_t start, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
			const uint8_t *build_id; /* when the kernel gives one */
			uint32_t build_id_len;
			const char *filename;
			/* live events only: the file of an exec's first
			 * mapping, held open by the recorder since the exec
			 * (deleted since, it is still this one); the
			 * recorder's, valid during the call */
			bool has_fd;
			int fd;
		} mmap;
		struct {
			const char *comm;
			bool exec;
		} comm;
		struct {
			uint32_t ppid, ptid;
		} fork; /* also for TF_REC_EXIT */
		struct {
			uint64_t count;
		} lost; /* also throttle (count 1) */
		struct {
			int wait_status;
		} proc_exit;
		struct {
			bool begin;
			tf_marker_scope scope;
			const char *name;     /* "" for a bare "end" */
			uint64_t cpu;         /* the writer's CPU clock, ns */
			bool has_cpu;
			const char *runner;   /* @runner, or NULL */
		} marker;
		struct {
			bool out;             /* off the CPU; else onto it */
			bool preempt;         /* out, and still runnable: preempted,
					       * not waiting (kernel 4.17+) */
		} cswitch;
		struct {
			/* the sampled event's count over the thread's whole
			 * life (ns of CPU for cpu-clock, instructions, ...),
			 * exact: the kernel's counter, not samples */
			uint64_t count;
			/* not this thread's: the count of the one thread of
			 * the tree the kernel did not report (perf.c), which
			 * the reader finds as the ended thread without a cost */
			bool remainder;
		} thread_cost;
		struct {
			uint32_t id;          /* how stacks refer to it */
			int firstlineno;
			bool qualified;       /* name is co_qualname */
			const char *name, *file;
		} pycode;
		struct {
			/* (code id, line | TF_PYFRAME_ENTRY) pairs, innermost
			 * first (see tf_pyframe) */
			const uint32_t *frames;
			uint32_t nframes;
			bool cut;             /* frames beyond the limit left out */
			bool partial;         /* the read stopped early (see python.h) */
			uint64_t delay_ns;    /* read this long after the sample */
		} pystack;
		struct {
			const char *argv;     /* NUL-separated arguments */
			uint32_t len;
			const char *cwd;      /* working directory ("" if unknown) */
		} cmdline;
		struct {
			uint64_t ptr;
		} alloc_free;
		struct {
			/* exact, since the thread's previous count */
			uint64_t allocs, bytes, frees;
		} alloc_count;
		struct {
			uint32_t flags;       /* non-zero: it counted nothing (why) */
			uint64_t hwm_kb;      /* its peak resident set, 0 unknown */
			const char *program;
		} alloc_proc;
		struct {
			const char *text;
			bool exec;            /* why the program `pid` execs next
					       * runs without the allocation sampler */
		} note;
		struct {
			uint64_t hwm_kb;      /* read from /proc while it ran: at least */
			bool go;              /* a Go program */
		} rss;
		struct {
			uint64_t end;
		} peek;
	};
} tf_rec_event;

/* In pystack.frames: the frame ends a C-level call of the evaluation loop. */
#define TF_PYFRAME_ENTRY 0x80000000u

typedef int (*tf_rec_event_fn)(void *ctx, const tf_rec_event *ev);
/* Replay every event in time order; stops early if `fn` returns non-zero
 * (and returns that value). */
int tf_recording_replay(tf_recording *r, tf_rec_event_fn fn, void *ctx);

/*
 * What this machine lets testflame do: the facts behind --sampler auto's
 * choice and `testflame doctor`. Probing perf costs a few syscalls on the
 * calling process; probing ptrace forks a short-lived child and traces it.
 */
enum {
	TF_PROBE_PERF = 1,
	TF_PROBE_PTRACE = 2,
	TF_PROBE_FOLLOW = 4,    /* makes a cgroup, opens an event on it, removes it */
};

typedef struct {
	int paranoid;           /* kernel.perf_event_paranoid; INT_MIN without the file */
	int perf_errno;         /* 0 when a user-space cpu-clock event opens */
	bool perf_kernel;       /* kernel samples are allowed too */
	int pmu_errno;          /* 0 when a hardware instructions counter opens */
	int max_sample_rate;    /* kernel.perf_event_max_sample_rate, 0 if unknown */
	int seccomp;            /* 0 none, 1 strict, 2 filter, -1 unknown */
	int ptrace_scope;       /* kernel.yama.ptrace_scope, -1 without Yama */
	int ptrace_errno;       /* 0 when a child can be seized, interrupted and read */
	int vm_readv_errno;     /* process_vm_readv() on that child */
	bool cap_perfmon, cap_sys_admin, cap_sys_ptrace;
	const char *container;  /* "docker", "podman", "kubernetes", "lxc", or NULL */
	bool follow_cgroup;     /* --follow auto gets a cgroup of the command's own */
	char follow_why[256];   /* else why not */
} tf_record_caps;

/* Fill `out` with what the `what` flags (TF_PROBE_*) ask; never fails. */
void tf_record_probe(tf_record_caps *out, int what);
/* Why perf_event_open is refused here and the exact fix (probe with
 * TF_PROBE_PERF first); each a sentence without a full stop. */
void tf_record_perf_advice(const tf_record_caps *c, char *why, size_t whylen,
			   char *fix, size_t fixlen);
/* The same for ptrace (probe with TF_PROBE_PTRACE). */
void tf_record_ptrace_advice(const tf_record_caps *c, char *why, size_t whylen,
			     char *fix, size_t fixlen);

/* x86-64 perf register numbers (arch/x86/include/uapi/asm/perf_regs.h). */
enum {
	TF_REG_AX, TF_REG_BX, TF_REG_CX, TF_REG_DX, TF_REG_SI, TF_REG_DI,
	TF_REG_BP, TF_REG_SP, TF_REG_IP, TF_REG_FLAGS, TF_REG_CS, TF_REG_SS,
	TF_REG_DS, TF_REG_ES, TF_REG_FS, TF_REG_GS, TF_REG_R8, TF_REG_R9,
	TF_REG_R10, TF_REG_R11, TF_REG_R12, TF_REG_R13, TF_REG_R14, TF_REG_R15,
	TF_REG_COUNT
};
/* The registers testflame asks for: all general purpose ones except the
 * segment registers (the kernel refuses DS..GS in sample_regs_user). */
#define TF_REGS_MASK ((((uint64_t)1 << TF_REG_COUNT) - 1) & \
	~((1ULL << TF_REG_DS) | (1ULL << TF_REG_ES) | (1ULL << TF_REG_FS) | (1ULL << TF_REG_GS)))
/* Value of register `reg` in a sample's packed regs array, or false. */
bool tf_regs_get(const uint64_t *regs, uint64_t mask, int reg, uint64_t *out);

#endif

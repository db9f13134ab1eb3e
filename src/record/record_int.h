/*
 * record_int.h - what the recorder's files share behind record.h (private
 * to src/record), one section per file that provides it: launching the
 * command held until the sampler is armed, reading /proc, copying stacks,
 * the command's cgroup, the spool the samplers write and replay reads,
 * the allocation sampler's files, the marker channel, notices, Python
 * stacks, the two samplers and the records the ptrace sampler makes by
 * hand.
 */
#ifndef TESTFLAME_RECORD_INT_H
#define TESTFLAME_RECORD_INT_H

#include "testflame/common.h"
#include "testflame/record.h"

#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/uio.h>

/* ---- launch.c ----
 *
 * Starting the profiled command, held until the sampler is armed.
 *
 * testflame -> guard -> command. The guard is a child subreaper: every
 * process the command leaves behind is re-parented to it, and if testflame
 * dies (even by SIGKILL) the guard kills the whole tree. The command itself
 * keeps testflame's process group, stdio, environment (plus the variables
 * testflame adds), working directory and signal dispositions, and waits on
 * a pipe until the sampler is attached, so not one instruction runs unseen.
 */
typedef struct tf_launch tf_launch;

typedef struct {
	char *const *argv;
	char *const *extra_env;
	const char *cwd;           /* NULL: testflame's own */
	const sigset_t *orig_mask; /* the signal mask the command must get */
	const char *remove_dir[3]; /* directories (the markers', the runners'
				    * reports, the allocation sampler's), removed
				    * with what they hold by the guard when
				    * testflame dies before the command */
	const char *cgroup_dir;    /* the command's cgroup, removed (empty) then too */
} tf_launch_opts;

/*
 * Look `file` up in PATH as execvp() would. Returns 0 and the path, or
 * TF_ENOTFOUND ("command not found") / TF_EPERM (not executable).
 */
int tf_launch_resolve(char **out, const char *file);

/* Fork the guard and the command; the command waits until released. */
int tf_launch_start(tf_launch **out, const tf_launch_opts *o);
pid_t tf_launch_pid(const tf_launch *l);
/* The descriptor to poll: readable when the guard reports. */
int tf_launch_fd(const tf_launch *l);
/* Let the command exec. */
int tf_launch_release(tf_launch *l);

typedef struct {
	bool exited;       /* the command is gone; wait_status is valid */
	int wait_status;
	int exec_errno;    /* non-zero when execve failed */
} tf_launch_state;
/* Read what the guard reported (non-blocking). Returns 0, or an error if
 * the guard vanished without a word. */
int tf_launch_poll(tf_launch *l, tf_launch_state *st);
/* Forward a signal to the command. */
void tf_launch_signal(tf_launch *l, int sig);
/*
 * Read every signal pending on `sigfd` (a signalfd of SIGINT, SIGTERM, ...)
 * and forward those the command has not had already: a terminal's signal
 * (si_code SI_KERNEL) reached the whole process group, the command
 * included; one sent to testflame alone is passed on. Returns true if any
 * signal was read.
 */
bool tf_launch_forward_signals(tf_launch *l, int sigfd);
/* Reap the guard; if the command still runs, kill its whole tree first. */
void tf_launch_free(tf_launch *l);

/* ---- procfs.c ----
 *
 * Reading the /proc files the recorder looks at: the fields of a stat line,
 * a status field, where a thread waits (its syscall file), an executable
 * mapping of a maps file, and the names of the syscalls a thread may wait
 * in. Parsers take text and do no I/O of their own, so each is tested on
 * the kernel's exact formats; the readers that open the files stay with
 * their callers, which know how long to keep them open.
 */
/*
 * The fields of /proc/.../stat after the command name, which may hold
 * spaces and parentheses: tok[0] is field 3 (the state), tok[1] the
 * parent's pid. Splits `buf` in place (fields end at a space, not a NUL:
 * read them with strtoull); returns how many were found, at most `max`.
 */
int tf_procfs_stat_fields(char *buf, char **tok, int max);

/* The parent pid of `pid` ("1234", or "self") from its stat file; -1 when
 * it cannot be read. */
pid_t tf_procfs_ppid(const char *pid);

/* The value of "Name:\tvalue" in a status file's text, into out (cut to
 * `len`); false when the field is absent. */
bool tf_procfs_status_field(const char *status, const char *name, char *out, size_t len);

/* Where a waiting thread waits: /proc/PID/task/TID/syscall. */
typedef struct {
	long nr;          /* the syscall; -1: blocked outside a syscall */
	uint64_t args[6];
	uint64_t sp, pc;
} tf_wait_site;

/* Parse a syscall file: 1 when the thread is running, 0 when it waits
 * (`out` filled), -1 for text that is neither. */
int tf_procfs_parse_syscall(const char *text, tf_wait_site *out);

/* "read", "futex", ..., "blocked" for -1, else "syscall_NR" in `buf`
 * (x86-64 numbers). */
const char *tf_procfs_syscall_name(long nr, char *buf, size_t len);

/* An executable mapping of a maps file, as perf's MMAP2 names it. */
typedef struct {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
	uint32_t prot, flags;   /* PROT_*, MAP_SHARED or MAP_PRIVATE */
	const char *name;       /* into the line; "//anon" for anonymous code */
} tf_maps_line;

/*
 * Parse one line of a maps file (without its newline). True for an
 * executable mapping worth an MMAP2: a file, anonymous code (named
 * "//anon" with its start as offset, perf's convention for JITs) or the
 * [vdso]; false for the rest ([stack], [vsyscall], data, bad lines).
 */
bool tf_procfs_parse_maps_line(const char *line, tf_maps_line *out);

/* A line of a mountinfo file, split in place: the filesystem's device
 * ("8:1"), the root of the mount within it and the mount point (their
 * octal escapes undone), the filesystem's type; false for another line. */
typedef struct {
	const char *dev, *root, *mount, *type;
} tf_mount_line;
bool tf_procfs_parse_mountinfo_line(char *line, tf_mount_line *out);

/* ---- stack.c ----
 *
 * Copying user stacks out of stopped threads and walking their frame
 * pointers (the ptrace sampler's).
 *
 * The stacks of all threads of a process caught by one tick come in one
 * process_vm_readv, split at page boundaries, so a stack running into
 * unmapped memory still yields its readable prefix. Where a seccomp filter
 * refuses process_vm_readv (EPERM, ENOSYS), /proc/PID/mem is read instead
 * from then on.
 */
#define TF_STACK_PAGE 4096
#define TF_STACK_IOV 1024   /* iovec elements per process_vm_readv */

typedef struct {
	bool vm_readv;          /* process_vm_readv still allowed */
	struct iovec liov[TF_STACK_IOV], riov[TF_STACK_IOV];
	uint32_t owner[TF_STACK_IOV];
	/* the last pages read for frames beyond a copied stack */
	uint8_t page[2 * TF_STACK_PAGE];
	uint64_t page_addr;
	size_t page_len;
} tf_stack_reader;

/* Start with process_vm_readv allowed. */
void tf_stack_reader_init(tf_stack_reader *r);

/*
 * The readable prefix of [addr, addr + len) in process `pid`: how many
 * bytes landed in `buf`. `*mem_fd` is the process's /proc/PID/mem, opened
 * here on first need (-1 until then); the caller closes it.
 */
size_t tf_stack_read(tf_stack_reader *r, pid_t pid, int *mem_fd, uint64_t addr, void *buf,
		     size_t len);

/* One stack to copy: `window` bytes from `sp` into `buf`. */
typedef struct {
	uint64_t sp;
	uint8_t *buf;
	bool skip;              /* nothing to read for this one */
	size_t len;             /* out: the readable prefix (0 when skipped) */
} tf_stack_req;

/* Copy the stacks of `n` threads of process `pid` in as few calls as the
 * iovec limit allows. A failing page ends that stack only. */
void tf_stack_read_many(tf_stack_reader *r, pid_t pid, int *mem_fd, tf_stack_req *req, size_t n,
			size_t window);

/*
 * The call chain along the frame pointers: `ip`, then the return address
 * of every frame from `fp` up, at most `max` entries. Frames are read from
 * the copied stack `win` (which starts at `sp`) and, beyond it, from the
 * process (a few pages at most). Stops at a frame pointer that does not
 * move up the stack or a return address in the first page.
 */
size_t tf_stack_walk_fp(tf_stack_reader *r, pid_t pid, int *mem_fd, uint64_t *chain, size_t max,
			uint64_t ip, uint64_t sp, uint64_t fp, const uint8_t *win, size_t winlen);

/* ---- cgroup.c ----
 *
 * A cgroup (v2) of the command's own, which the sampler follows instead of
 * inheriting its events into every process (perf.c says why).
 */
typedef struct tf_cgroup tf_cgroup;

/*
 * Make an empty cgroup under this process's own in the cgroup2 hierarchy.
 * TF_EUNSUPPORTED, with the reason, where there is none or it cannot be
 * written (no cgroup2 mount, a read-only one, no permission).
 */
int tf_cgroup_create(tf_cgroup **out);
/* Its directory, and a descriptor of it (for PERF_FLAG_PID_CGROUP). */
const char *tf_cgroup_path(const tf_cgroup *cg);
int tf_cgroup_fd(const tf_cgroup *cg);
/* Move process `pid` into it; its children are born there. */
int tf_cgroup_add(tf_cgroup *cg, pid_t pid);
/* The most memory its processes held at once (memory.peak, bytes), 0
 * where the memory controller does not count it. */
uint64_t tf_cgroup_memory_peak(const tf_cgroup *cg);
/* Remove it: what still lives there (a daemon the suite left) goes back
 * to the parent cgroup first. NULL is a no-op. */
void tf_cgroup_free(tf_cgroup *cg);

/* The cgroup2 mount point and this process's cgroup in it, from the texts
 * of /proc/self/mountinfo and /proc/self/cgroup; false when either lacks
 * it. For tests. */
bool tf_cgroup_parse_mount(const char *mountinfo, char *out, size_t len);
bool tf_cgroup_parse_own(const char *cgroup, char *out, size_t len);

/* ---- spool.c ----
 *
 * The samplers' side of a recording.
 *
 * A sampler appends records in the kernel's perf layout (struct
 * perf_event_header + body) to the spool, an unlinked temp file; replay
 * decodes them in time order. The perf sampler copies its ring buffers
 * verbatim; the ptrace sampler synthesizes the same records, plus the few
 * of testflame's own defined below.
 */
/* testflame's own record types (perf leaves 64 and up to user space). */
enum {
	/* { u32 pid, tid; u64 time; s32 wait_status; u32 pad; } */
	TF_SPOOL_PROC_EXIT = 65,
	/* { u32 len; u32 pad; char offcpu[len] (NUL padded to 8);
	 *   then a PERF_RECORD_SAMPLE body } : a sample taken off-CPU */
	TF_SPOOL_SAMPLE_EXT = 66,
	/* { u32 pid, tid; u64 time; u32 begin, scope; u32 len; u32 pad;
	 *   u64 cpu + 1 (0: none); char name[len] (NUL padded to 8) } */
	TF_SPOOL_MARKER = 67,
	/* { u32 pid, tid; u64 time; u32 len, cwdlen;
	 *   char cwd[cwdlen] NUL, argv[len] } */
	TF_SPOOL_CMDLINE = 68,
	/* { u32 pid, tid; u64 time; u64 count; u32 remainder, pad } : a
	 * thread's exact cost, for threads the kernel does not report (the
	 * ptrace sampler's threads); with remainder set, what the perf events
	 * counted beyond every thread the kernel reported (see perf.c) */
	TF_SPOOL_THREAD_COST = 69,
	/* { u32 pid, tid; u64 time; u32 id; s32 firstlineno; u32 namelen,
	 *   qualified; char name[namelen] NUL, file[] (NUL padded to 8) } */
	TF_SPOOL_PYCODE = 70,
	/* { u32 pid, tid; u64 time; u32 nframes, flags; u64 delay_ns;
	 *   u32 frames[2 * nframes] } : the Python stack of the sample of
	 * `tid` at `time` (flags: 1 cut, 2 partial), written before it */
	TF_SPOOL_PYSTACK = 71,
	/* { u32 pid, tid; u64 time; u64 size, ptr, rate; u32 nips, stack_len;
	 *   u64 sp, bp, ip; u64 ips[nips]; u8 stack[stack_len] (padded) } : an
	 * allocation the sampler took (alloc.c; ips[0] is the caller's pc) */
	TF_SPOOL_ALLOC = 72,
	/* { u32 pid, tid; u64 time; u64 ptr } : a sampled block freed */
	TF_SPOOL_ALLOC_FREE = 73,
	/* { u32 pid, tid; u64 time; u64 allocs, bytes, frees; u32 kind, pad } :
	 * a thread's allocations since its previous count, exact */
	TF_SPOOL_ALLOC_COUNT = 74,
	/* { u32 pid, flags; u64 time, hwm_kb, end; char program[] NUL } : a
	 * process image that ran the sampler from `time` (flags: why it
	 * counted nothing), its peak resident set (0 unknown) */
	TF_SPOOL_ALLOC_PROC = 75,
	/* { u32 pid, tid; u64 time; u32 exec, pad; char text[] NUL } : for
	 * the run's notes; exec: it says why the program process `pid` execs
	 * next runs without the allocation sampler */
	TF_SPOOL_NOTE = 76,
	/* { u32 pid, go; u64 time, hwm_kb } : the peak resident set of a
	 * process image without the allocation sampler, read from /proc at
	 * `time`; go: a Go program */
	TF_SPOOL_RSS = 77,
	/* a PERF_RECORD_SAMPLE body written by the context-switch event (the
	 * perf sampler's off-CPU ring, perf.c): a thread leaving its CPU */
	TF_SPOOL_SWITCH_SAMPLE = 78,
	/* { u32 cpu, pad; u64 time; u64 period } : from `time` on, a
	 * switch sample of `cpu` stands for `period` switch-outs (perf.c's
	 * cap; the event's samples do not carry their period) */
	TF_SPOOL_OFFCPU_PERIOD = 79,
	/* { u32 pid, pad; u64 time, end } : testflame read process pid's
	 * memory through /proc (its arguments) from `time` to `end`, holding
	 * the process's mmap lock (tf_record_peeked) */
	TF_SPOOL_PEEK = 80,
};


/* What the sample records contain. */
typedef struct {
	uint64_t sample_type;   /* PERF_SAMPLE_* bits */
	uint64_t regs_mask;     /* PERF_SAMPLE_REGS_USER mask */
	bool sample_id_all;     /* side-band records end in a sample_id */
	uint64_t switch_sample_type; /* ... of TF_SPOOL_SWITCH_SAMPLE records */
} tf_spool_layout;

typedef struct tf_spool tf_spool;

int tf_spool_open(tf_spool **out);
/* Append whole records. */
int tf_spool_append(tf_spool *s, const void *data, size_t len);
/* Append a record of testflame's own type: header, fixed fields, then a
 * variable part (NUL-terminated here, padded to 8 bytes). */
int tf_spool_append_own(tf_spool *s, uint16_t type, const void *fixed, size_t fixed_len,
			const void *var, size_t var_len);
/* testflame read process `pid`'s memory from `start` to `end` (record.c):
 * a TF_SPOOL_PEEK record */
void tf_record_peeked(tf_spool *s, uint32_t pid, uint64_t start, uint64_t end);
/* Flush and map for reading; no appends after this. */
int tf_spool_finish(tf_spool *s);
const uint8_t *tf_spool_data(const tf_spool *s, size_t *len);
uint64_t tf_spool_size(const tf_spool *s);
void tf_spool_free(tf_spool *s);

/* Decode one record. Returns 1 if `out` was filled, 0 for a record type
 * replay does not hand out, negative for a malformed record. */
int tf_spool_decode(const tf_spool_layout *layout, const struct perf_event_header *h,
		    tf_rec_event *out);
/* Where a side-band record's time is, counted back from its end: the
 * sample_id trailer's TIME on (0: the records carry no time). */
size_t tf_spool_id_time_back(const tf_spool_layout *layout);
/* The timestamp of a record (0 if it has none). */
uint64_t tf_spool_record_time(const tf_spool_layout *layout,
			      const struct perf_event_header *h);

/* Shared by the samplers: the recording they fill in. */
struct tf_recording {
	tf_record_info info;
	tf_spool_layout layout;
	tf_spool *spool;
};

/* ---- alloc.c ----
 *
 * Measuring the command's allocations: the allocation sampler
 * (preload/tfalloc.c) found or unpacked, the environment that preloads it
 * into the command's processes, and after the run what their files say,
 * into the spool.
 */
typedef struct tf_alloc tf_alloc;

/*
 * Prepare a run's measure of allocations: a directory for the processes'
 * files, the library to preload, and the variables that preload it, with
 * `rate` (mean bytes between samples; 0 the default) and `stack_bytes`
 * (copied a sample for DWARF unwinding; 0 none). `program` is the
 * command's path: a program the sampler must not enter (a sanitizer
 * build) runs without it, and so does everything it starts. A library
 * that cannot be had is no error: the command runs without it, and
 * tf_alloc_collect() says why in the run's notes.
 */
int tf_alloc_open(tf_alloc **out, unsigned rate, unsigned stack_bytes, const char *program);
/* "KEY=VALUE" to add to the command's environment, NULL-terminated. */
char *const *tf_alloc_env(const tf_alloc *a);
/* The directory (the launcher's guard removes it if testflame dies). */
const char *tf_alloc_dir(const tf_alloc *a);
/*
 * The programs the sampler does not enter (static ones, Go's, setuid
 * ones) have their peak resident set read from /proc while they live:
 * tf_alloc_watch() at each exec, tf_alloc_poll() at each turn of the
 * recording loop (at most every few milliseconds), which drops the images
 * whose sampler's file appeared (it tells their peak at their exit, to
 * the page). A lower bound: what a process reached after its last read.
 */
void tf_alloc_watch(tf_alloc *a, uint32_t pid, uint64_t time);
void tf_alloc_poll(tf_alloc *a);

/*
 * After the run: every process image's samples, frees, counts and peak
 * into the spool (TF_SPOOL_ALLOC*), and the notes of what stepped aside
 * (TF_SPOOL_NOTE). Files that do not read are counted in `info`, not
 * errors; only a spool that refuses a record is.
 */
int tf_alloc_collect(tf_alloc *a, tf_spool *s, tf_record_info *info);
/* Removes the directory. */
void tf_alloc_free(tf_alloc *a);

/* ---- markers.c ----
 *
 * The test marker channel: a file the suite appends "begin NAME" / "end
 * NAME" lines to, read live by the sampler loop so each line gets a
 * timestamp on the samples' clock.
 */
typedef struct tf_markers tf_markers;

int tf_markers_open(tf_markers **out);
/* "TESTFLAME_MARKERS=<path>", for the command's environment. */
char *tf_markers_env(tf_markers *m);
/* The directory the file is in (for the launch guard to remove). */
const char *tf_markers_dir(const tf_markers *m);
/* Read the complete lines written since the last call into the spool;
 * with `final`, also a last line that lacks its newline. */
int tf_markers_poll(tf_markers *m, tf_spool *s, bool final);
/* A descriptor that becomes readable when the file is written to (inotify),
 * so lines without a timestamp are stamped as they arrive. */
int tf_markers_fd(tf_markers *m);
/* Lines that were not markers (reported once at the end). */
uint64_t tf_markers_bad_lines(const tf_markers *m);
/* Remove the file; after the call the pointer is invalid. */
void tf_markers_free(tf_markers *m);

/* Parse one line; exposed for the unit tests. Returns false if it is not
 * a marker. `name` points into `line`, which is modified. */
typedef struct {
	bool begin;
	char *name;
	uint32_t pid, tid;
	uint64_t cpu;         /* @cpu: the writer's CPU clock (ns); 0 when not given */
	bool has_cpu;
	uint64_t time; /* 0 when the line carries none */
	tf_marker_scope scope;
	const char *runner;   /* @runner: the runner that wrote it, or NULL */
} tf_marker_line;
bool tf_marker_parse(char *line, tf_marker_line *out);

/* ---- execfiles.c ----
 *
 * The files programs were started from, held from their exec (fanotify),
 * so that one deleted as soon as it exits still has its symbols; see the
 * file for why and how long.
 */
typedef struct tf_execfiles tf_execfiles;

/* Watch every exec from now on. TF_EPERM without CAP_SYS_ADMIN,
 * TF_EUNSUPPORTED where the kernel cannot; *out is NULL then. */
int tf_execfiles_open(tf_execfiles **out);
/* Once a reader turn: read the kernel's queue, close what aged. */
void tf_execfiles_poll(tf_execfiles *x);
/* The file process `pid` exec'd whose inode is `ino`, open (x's: valid
 * until the next poll), or -1; _find reads the kernel's queue first when
 * it is not known yet, _held does not. NULL-safe. */
int tf_execfiles_find(tf_execfiles *x, uint32_t pid, uint64_t ino);
int tf_execfiles_held(const tf_execfiles *x, uint32_t pid, uint64_t ino);
void tf_execfiles_free(tf_execfiles *x);

/* ---- notice.c ----
 *
 * What a recording tells its caller while it runs: one-line notices and the
 * figures of the progress line, both through the callbacks of
 * tf_record_opts. The samplers and record.c's loop call these; none of them
 * calls the others for it.
 */
/* Format a one-line notice and hand it to `fn` (nothing when fn is NULL). */
void tf_record_notice(tf_notice_fn fn, void *ctx, tf_notice_level level, const char *fmt, ...)
	TF_PRINTF(4, 5);

/* For the samplers' loops: call o->progress at most every 250 ms; `last`
 * keeps the time of the previous call. */
void tf_record_report_progress(tf_recording *rec, const tf_record_opts *o, uint64_t processes,
			       uint64_t *last);

/* ---- pyread.c ----
 *
 * The Python stacks of a recording: for every sample of a CPython process,
 * the interpreter's own frames of the sampled thread, read from its memory
 * as the sample is taken and spooled just before it (see pyread.c).
 */
typedef struct tf_pyread tf_pyread;

/* Counters and notices go to `rec` and `o`'s notice hook. */
int tf_pyread_new(tf_pyread **out, tf_recording *rec, const tf_record_opts *o);
/* Side-band, as the sampler reads it: mappings (interpreters to find),
 * forks (a child keeps its parent's interpreter), execs and exits. */
void tf_pyread_event(tf_pyread *r, const tf_rec_event *ev);
/* The sampler took a sample of `tid` (of process `pid`) at `time`: read its
 * Python stack now and spool it (nothing for a process without Python). */
void tf_pyread_sample(tf_pyread *r, uint32_t pid, uint32_t tid, uint64_t time);
/* The first spool error met (0 if none): samples go on without Python
 * stacks after one, and the recording fails with it. */
int tf_pyread_error(const tf_pyread *r);
/* Whether a process whose Python stacks are read lives now: the
 * recording loop then drains often enough to read them near their
 * samples. */
bool tf_pyread_live(const tf_pyread *r);
void tf_pyread_free(tf_pyread *r);

/* ---- perf.c ----
 *
 * The perf_event sampler.
 */
typedef struct tf_perf tf_perf;

typedef struct {
	pid_t pid;              /* the held command: events enable on its exec */
	tf_event event;
	tf_callgraph callgraph;
	unsigned freq;
	unsigned stack_bytes;
	tf_notice_fn notice;
	void *notice_ctx;
	tf_pyread *py;          /* Python stacks: read at every sample, or NULL */
	int cgroup_fd;          /* >= 0: the cgroup `pid` is in, which time events
				 * follow instead of inheriting (perf.c); -1 */
	tf_offcpu offcpu;       /* record switch-outs (perf.c); --event wall: on */
	unsigned offcpu_max;    /* their cap a second per CPU; 0: the default */
} tf_perf_opts;

/*
 * Open per-CPU inherited events on `pid`, walking the permission ladder.
 * Fills rec->layout, rec->info.event/kernel/rung. Returns TF_EPERM
 * when perf_event_open is refused outright (the message says why and how to
 * fix it), TF_EUNSUPPORTED when the kernel lacks what we need.
 */
int tf_perf_open(tf_perf **out, const tf_perf_opts *o, tf_recording *rec);
/* Have the kernel send `sig` to the calling thread when a side-band ring
 * is half full, instead of waking the pollers of the descriptors below
 * (perf.c says why). Returns 0, or an error when a descriptor refused:
 * then poll them. */
int tf_perf_signal(tf_perf *p, int sig);
/* Whether the events follow the command's cgroup rather than inherit. */
bool tf_perf_by_cgroup(const tf_perf *p);
/* Nanoseconds: the reader's timer must drain at least this often when it
 * does not poll the sampling rings (a quarter of what fills one). */
uint64_t tf_perf_drain_within(const tf_perf *p);
/* Descriptors to poll for data. Returns how many were written. */
size_t tf_perf_pollfds(const tf_perf *p, struct pollfd *fds, size_t max);
/* Copy everything the ring buffers hold into the spool; call `live` for
 * side-band records. Updates rec->info counters. */
int tf_perf_drain(tf_perf *p, tf_recording *rec, tf_live_fn live, void *live_ctx,
		  uint64_t *processes);
/* After the last drain: what the events counted beyond the threads the
 * kernel reported (one thread's exact count, see perf.c), as a
 * TF_SPOOL_THREAD_COST remainder record stamped `time`. */
int tf_perf_finish(tf_perf *p, tf_recording *rec, uint32_t root_pid, uint64_t time);
void tf_perf_close(tf_perf *p);

/* Why perf_event_open may be refused here, with the fix (for messages and
 * `testflame doctor`). Writes a sentence; returns the paranoid level. */
int tf_perf_paranoid(void);

/* ---- synth.c ----
 *
 * Perf records made by hand: the ptrace sampler sees what the kernel would
 * have written had perf_event been allowed, and writes exactly that, so the
 * spool, replay and everything after them know one format. Each function
 * starts `b` afresh with one whole record (its header's size set), in the
 * layout the ptrace sampler declares: samples carry IP, TID, TIME, CPU,
 * PERIOD and CALLCHAIN (then REGS_USER and STACK_USER when stacks are
 * copied), and side-band records end in the sample_id trailer TID, TIME,
 * CPU.
 */
/* PERF_RECORD_FORK or PERF_RECORD_EXIT of thread `tid` of `pid`; a fork's
 * trailer names the parent (ptid of ppid), as the kernel's does. */
void tf_synth_task(tf_buf *b, uint32_t type, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid,
		   uint64_t time);
/* PERF_RECORD_COMM of an exec. */
void tf_synth_comm(tf_buf *b, pid_t pid, pid_t tid, const char *comm, uint64_t time);
/* PERF_RECORD_MMAP2 of an executable mapping. */
void tf_synth_mmap2(tf_buf *b, pid_t pid, pid_t tid, const tf_maps_line *m, uint64_t time);
/* TF_SPOOL_THREAD_COST: a thread's exact CPU time when it ended. */
void tf_synth_thread_cost(tf_buf *b, pid_t pid, pid_t tid, uint64_t cpu_ns, uint64_t time);
/* TF_SPOOL_PROC_EXIT: a process ended with wait status `status`. */
void tf_synth_proc_exit(tf_buf *b, pid_t pid, pid_t tid, int status, uint64_t time);

typedef struct {
	pid_t pid, tid;
	uint64_t time, period;
	/* NULL: an on-CPU PERF_RECORD_SAMPLE; else a TF_SPOOL_SAMPLE_EXT
	 * taken off-CPU, naming what the thread waits in */
	const char *offcpu;
	const uint64_t *chain;  /* the ip, then return addresses */
	size_t nchain;          /* at least 1 */
	bool copy_stack;        /* the layout has REGS_USER and STACK_USER */
	/* every register by perf number (TF_REG_*); NULL: ABI none, no
	 * stack (a 32-bit task) */
	const uint64_t *regs;
	const uint8_t *stack;   /* the copied user stack, from the sp up */
	size_t stack_len;       /* trimmed to what a 16-bit record size leaves */
} tf_synth_sample_in;

/* A sample; returns the offset of its body (the IP) in `b`. */
size_t tf_synth_sample(tf_buf *b, const tf_synth_sample_in *in);
/* Stamp a sample made earlier with another time and period (an off-CPU
 * sample reused while its thread still waits where it was taken). */
void tf_synth_sample_retime(void *record, size_t body, uint64_t time, uint64_t period);

/* ---- ptrace.c ----
 *
 * The ptrace sampler: for machines that refuse perf_event_open but let a
 * process trace its own descendants.
 */
/* What the sampler loop serves besides the tree (record.c's). */
typedef struct {
	int sigfd;              /* SIGINT, SIGTERM, ...: forwarded as perf's loop does */
	tf_live_fn live;        /* side-band hook */
	void *live_ctx;
	tf_markers *markers;    /* test markers to read as they come, or NULL */
	tf_pyread *py;          /* Python stacks of the samples, or NULL */
	tf_alloc *alloc;        /* the programs without the allocation sampler's
				 * peaks to read, or NULL */
} tf_ptrace_loop;

/*
 * Seize the held command of `l`, release it, and sample it and every
 * process and thread it spawns until it exits; then detach from whatever
 * it left running. Writes the same records as the perf sampler into
 * rec->spool (and fills rec->layout, rec->info's sampler, event, rung and
 * counters), calls `io->live` for each side-band record, and reads the
 * markers into the spool; rec->info.wait_status is left to the caller
 * (the guard reports it).
 * Returns TF_EPERM, with the reason and the fix, when the command cannot
 * be traced; it is then still held and never ran.
 */
int tf_ptrace_record(tf_recording *rec, tf_launch *l, const tf_record_opts *o,
		     const tf_ptrace_loop *io);

#endif

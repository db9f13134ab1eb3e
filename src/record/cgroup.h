/*
 * cgroup.h - a cgroup (v2) of the command's own, which the sampler follows
 * instead of inheriting its events into every process (private to
 * src/record; perf.c says why).
 */
#ifndef TESTFLAME_RECORD_CGROUP_H
#define TESTFLAME_RECORD_CGROUP_H

#include "testflame/common.h"

#include <sys/types.h>

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

#endif

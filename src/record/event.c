/*
 * event.c - names and value types of the events, samplers and call-graph
 * modes, shared by the samplers, the run file writer and the cli.
 */
#include "testflame/record.h"

#include <string.h>

const char *const tf_event_names[] = {
	[TF_EVENT_AUTO] = "auto",
	[TF_EVENT_CPU_CLOCK] = "cpu-clock",
	[TF_EVENT_INSTRUCTIONS] = "instructions",
	[TF_EVENT_CYCLES] = "cycles",
	[TF_EVENT_WALL] = "wall",
	NULL,
};

const char *const tf_sampler_names[] = {
	[TF_SAMPLER_AUTO] = "auto",
	[TF_SAMPLER_PERF] = "perf",
	[TF_SAMPLER_PTRACE] = "ptrace",
	NULL,
};

const char *const tf_callgraph_names[] = {
	[TF_CALLGRAPH_AUTO] = "auto",
	[TF_CALLGRAPH_FP] = "fp",
	[TF_CALLGRAPH_DWARF] = "dwarf",
	NULL,
};

const char *const tf_follow_names[] = {
	[TF_FOLLOW_AUTO] = "auto",
	[TF_FOLLOW_CGROUP] = "cgroup",
	[TF_FOLLOW_INHERIT] = "inherit",
	NULL,
};

const char *const tf_offcpu_names[] = {
	[TF_OFFCPU_AUTO] = "auto",
	[TF_OFFCPU_ON] = "on",
	[TF_OFFCPU_OFF] = "off",
	NULL,
};

/* The index of `s` in a NULL-terminated list, or -1. */
static int name_index(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

const char *tf_event_name(tf_event e)
{
	return (unsigned)e < TF_ARRAY_SIZE(tf_event_names) - 1 ? tf_event_names[e] : "unknown";
}

int tf_event_parse(tf_event *out, const char *s)
{
	int i = name_index(tf_event_names, s);
	if (i < 0)
		return tf_error_set(TF_EUSAGE, "unknown event '%s'", s);
	*out = (tf_event)i;
	return 0;
}

const char *tf_sampler_name(tf_sampler s)
{
	return (unsigned)s < TF_ARRAY_SIZE(tf_sampler_names) - 1 ? tf_sampler_names[s] : "auto";
}

int tf_sampler_parse(tf_sampler *out, const char *s)
{
	int i = name_index(tf_sampler_names, s);
	if (i < 0)
		return tf_error_set(TF_EUSAGE, "unknown sampler '%s'", s);
	*out = (tf_sampler)i;
	return 0;
}

const char *tf_callgraph_name(tf_callgraph c)
{
	return (unsigned)c < TF_ARRAY_SIZE(tf_callgraph_names) - 1 ? tf_callgraph_names[c] : "auto";
}

int tf_callgraph_parse(tf_callgraph *out, const char *s)
{
	int i = name_index(tf_callgraph_names, s);
	if (i < 0)
		return tf_error_set(TF_EUSAGE, "unknown call graph mode '%s'", s);
	*out = (tf_callgraph)i;
	return 0;
}

void tf_event_value_type(tf_event e, const char **type, const char **unit)
{
	switch (e) {
	case TF_EVENT_INSTRUCTIONS:
		*type = "instructions";
		*unit = "count";
		break;
	case TF_EVENT_CYCLES:
		*type = "cycles";
		*unit = "count";
		break;
	case TF_EVENT_WALL:
		*type = "wall";
		*unit = "nanoseconds";
		break;
	default:
		*type = "cpu";
		*unit = "nanoseconds";
		break;
	}
}

void tf_record_opts_init(tf_record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->freq = TF_DEFAULT_FREQ;
	o->stack_bytes = 8192;
	o->python = true;
}

bool tf_regs_get(const uint64_t *regs, uint64_t mask, int reg, uint64_t *out)
{
	if (!regs || reg < 0 || reg >= 64 || !(mask & (1ULL << reg)))
		return false;
	/* regs are packed: the value's index is the number of mask bits below */
	*out = regs[__builtin_popcountll(mask & ((1ULL << reg) - 1))];
	return true;
}

int tf_follow_parse(tf_follow *out, const char *s)
{
	int i = name_index(tf_follow_names, s);
	if (i < 0)
		return tf_error_set(TF_EUSAGE, "unknown way to follow the command '%s'", s);
	*out = (tf_follow)i;
	return 0;
}

int tf_offcpu_parse(tf_offcpu *out, const char *s)
{
	int i = name_index(tf_offcpu_names, s);
	if (i < 0)
		return tf_error_set(TF_EUSAGE, "unknown off-CPU setting '%s' (auto, on or off)", s);
	*out = (tf_offcpu)i;
	return 0;
}

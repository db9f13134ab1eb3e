/*
 * event.c - names and value types of the events, samplers and call-graph
 * modes, shared by the samplers, the run file writer and the cli.
 */
#include "testflame/record.h"

#include <string.h>

static const char *const event_names[] = {
	[TF_EVENT_AUTO] = "auto",
	[TF_EVENT_CPU_CLOCK] = "cpu-clock",
	[TF_EVENT_INSTRUCTIONS] = "instructions",
	[TF_EVENT_CYCLES] = "cycles",
	[TF_EVENT_WALL] = "wall",
};

const char *tf_event_name(tf_event e)
{
	return (unsigned)e < TF_ARRAY_SIZE(event_names) ? event_names[e] : "unknown";
}

int tf_event_parse(tf_event *out, const char *s)
{
	for (size_t i = 0; i < TF_ARRAY_SIZE(event_names); i++)
		if (strcmp(event_names[i], s) == 0) {
			*out = (tf_event)i;
			return 0;
		}
	return tf_error_set(TF_EUSAGE, "unknown event '%s'", s);
}

const char *tf_sampler_name(tf_sampler s)
{
	switch (s) {
	case TF_SAMPLER_PERF: return "perf";
	case TF_SAMPLER_PTRACE: return "ptrace";
	default: return "auto";
	}
}

const char *tf_callgraph_name(tf_callgraph c)
{
	switch (c) {
	case TF_CALLGRAPH_FP: return "fp";
	case TF_CALLGRAPH_DWARF: return "dwarf";
	default: return "auto";
	}
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
	o->freq = 99;
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

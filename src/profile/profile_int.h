/*
 * profile_int.h - helpers shared by the files of the profile module and by no
 * one else.
 */
#ifndef TESTFLAME_PROFILE_INT_H
#define TESTFLAME_PROFILE_INT_H

#include "testflame/profile.h"

/*
 * One byte per string id of `p`: 1 where the string equals `s`. Foreign
 * string tables may hold a string twice, so labels are matched through this
 * rather than by comparing ids. Free with free().
 */
uint8_t *tf_profile_string_flags(const tf_profile *p, const char *s);

/* The first string label of sample `s` whose key is flagged in `key_flags`;
 * 0 when the sample has none. */
static inline tf_strid tf_sample_label_flagged(const tf_profile *p, const tf_sample *s,
					       const uint8_t *key_flags)
{
	const tf_label *l = p->labels.v + s->labels_off;
	for (uint32_t j = 0; j < s->nlabels; j++)
		if (l[j].str && key_flags[l[j].key])
			return l[j].str;
	return 0;
}

/* Keep the gzip bytes a profile was decoded from (tf_profile_source);
 * takes `gz` over, leaving it empty. */
void tf_profile_keep_source(tf_profile *p, tf_buf *gz);

#endif

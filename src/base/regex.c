/*
 * regex.c - how much a POSIX extended regex costs to compile, before it is.
 *
 * Patterns come from the repository's .testflame.yml, which a pull request
 * may change. glibc's regcomp() copies a repeated sub-expression once per
 * repetition ("a+" becomes "aa*", "a{3}" three copies), and nested or
 * stacked repetitions multiply: "x++++...+" with a hundred pluses, or
 * "((a{99}){99}){99}", takes gigabytes and minutes to compile, and the
 * epsilon closures it then computes grow with the square of the copies
 * ("a++++?+++++++++", 16,384 copies, takes 3 s). The estimate below follows
 * the copies: the size of a pattern is the sum of its pieces, a repeated
 * piece counts as many times as it can be copied, and callers refuse a
 * pattern above TF_REGEX_MAX_COST (4,096: at worst 0.2 s and 7 MB) instead
 * of compiling it.
 */
#include "testflame/common.h"

#include <ctype.h>
#include <stdlib.h>

/* Saturates: beyond this nothing is compiled anyway. */
#define BIG 1e12

static double seq(const char **pp, int depth);

/* "{m}", "{m,}" or "{m,n}" at *pp: the most copies it makes, or -1 if it
 * is not an interval (then '{' is an ordinary character). */
static double interval(const char **pp)
{
	const char *p = *pp + 1;
	double m = 0, n = -1;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++)
		m = m < BIG ? m * 10 + (*p - '0') : BIG;
	if (*p == ',') {
		p++;
		if (isdigit((unsigned char)*p)) {
			n = 0;
			for (; isdigit((unsigned char)*p); p++)
				n = n < BIG ? n * 10 + (*p - '0') : BIG;
		} else {
			n = m + 1; /* {m,}: m copies and a star */
		}
	}
	if (*p != '}')
		return -1;
	*pp = p + 1;
	return TF_MAX(m, n) + 1;
}

/* One atom and the repetitions after it. */
static double piece(const char **pp, int depth)
{
	const char *p = *pp;
	double size = 1, f;

	if (*p == '(') {
		p++;
		size = depth > 200 ? BIG : seq(&p, depth + 1);
		if (*p == ')')
			p++;
	} else if (*p == '[') {
		p++;
		if (*p == '^')
			p++;
		if (*p == ']')
			p++;
		while (*p && *p != ']') {
			if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
				char close = p[1];
				p += 2;
				while (*p && !(*p == close && p[1] == ']'))
					p++;
				if (*p)
					p += 2;
			} else {
				p++;
			}
		}
		if (*p)
			p++;
	} else if (*p == '\\' && p[1]) {
		p += 2;
	} else {
		p++;
	}
	for (;;) {
		if (*p == '*' || *p == '+' || *p == '?') {
			size *= 2;
			p++;
		} else if (*p == '{' && (f = interval(&p)) > 0) {
			size *= f;
		} else {
			break;
		}
		if (size > BIG)
			size = BIG;
	}
	*pp = p;
	return size;
}

/* Alternatives up to ')' or the end: the sum of their pieces. */
static double seq(const char **pp, int depth)
{
	double size = 0;

	while (**pp && **pp != ')') {
		if (**pp == '|') {
			(*pp)++;
		} else {
			double one = piece(pp, depth); /* not inside TF_MIN: it moves *pp */
			size = TF_MIN(size + one, BIG);
		}
	}
	return size;
}

size_t tf_regex_cost(const char *re)
{
	double size = 0;

	while (re && *re) {
		double one = seq(&re, 0);
		size = TF_MIN(size + one, BIG);
		if (*re == ')')
			re++; /* unbalanced: regcomp() will say so */
	}
	return (size_t)size;
}

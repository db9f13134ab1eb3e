/*
 * test_symbolize_unwind.c - DWARF CFI unwinding on a real stack, and the
 * frame-pointer verdict per binary.
 *
 * The symbolize_nofp fixture (-O2 -fomit-frame-pointer) captures its
 * registers and 8 KiB of its live stack inside main -> uw_level1 ->
 * uw_level2 -> uw_level3, as perf's sampler would; unwinding that must find
 * the whole chain, in order, up to _start; so must the same program built
 * with its unwind tables in .debug_frame only. The PLT's CFA expression is
 * checked on a crafted stack, and broken input must stop the walk cleanly.
 */
#include "symbolize_helpers.h"

#include <fcntl.h>
#include <gelf.h>

#define NREGS 20 /* TF_REGS_MASK: all but DS..GS */

typedef struct {
	fixture f;
	uint64_t regs[NREGS];
	uint8_t *stack;
	size_t stack_size;
	tf_symbolizer *s;
} captured;

static void capture_start(captured *c, const char *name)
{
	char *path = fixture_path(name);
	tf_symbolizer_opts o;

	fixture_start(&c->f, path, NULL);
	free(path);
	const char *r = fixture_get(&c->f, "regs");
	for (int i = 0; i < NREGS; i++) {
		unsigned long long v;
		int used;
		assert_int_equal(sscanf(r, "%llx%n", &v, &used), 1);
		c->regs[i] = v;
		r += used;
	}
	const char *hex = fixture_get(&c->f, "stack");
	c->stack_size = strlen(hex) / 2;
	assert_true(c->stack_size > 256);
	c->stack = malloc(c->stack_size);
	for (size_t i = 0; i < c->stack_size; i++) {
		unsigned v;
		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		c->stack[i] = (uint8_t)v;
	}
	tf_symbolizer_opts_init(&o);
	assert_int_equal(tf_symbolizer_new(&c->s, &o), 0);
	feed_maps(c->s, c->f.pid, false, true);
}

static void capture_stop(captured *c)
{
	fixture_stop(&c->f);
	tf_symbolizer_free(c->s);
	free(c->stack);
}

static const char *fn_at(captured *c, uint64_t ip, bool leaf)
{
	const tf_symloc *l = tf_symbolizer_lookup(c->s, (uint32_t)c->f.pid, 0, leaf ? ip : ip - 1, false);
	/* the outermost frame of the address: the function the call is in */
	return l->frames[l->nframes - 1].function;
}

static void unwind_real_stack(const char *fixture_name)
{
	captured c;
	uint64_t ips[64];
	bool truncated = true;

	capture_start(&c, fixture_name);
	size_t n = tf_symbolizer_unwind_ex(c.s, (uint32_t)c.f.pid, 0, c.regs, TF_REGS_MASK,
					   c.stack, c.stack_size, ips, 64, &truncated);
	const char *want[] = { "uw_level3", "uw_level2", "uw_level1", "main",
			       "__libc_start_call_main", "__libc_start_main", "_start" };
	if (n != TF_ARRAY_SIZE(want)) {
		for (size_t i = 0; i < n; i++)
			print_message("# frame %zu: %s\n", i, fn_at(&c, ips[i], i == 0));
	}
	assert_int_equal(n, TF_ARRAY_SIZE(want));
	assert_int_equal(ips[0], c.regs[8]); /* the leaf is the ip */
	for (size_t i = 0; i < n; i++) {
		const char *got = fn_at(&c, ips[i], i == 0);
		/* glibc's symbol is __libc_start_main_impl or the alias */
		if (strncmp(got, want[i], strlen(want[i])) != 0)
			fail_msg("frame %zu is '%s', expected '%s'", i, got, want[i]);
	}
	assert_false(truncated); /* reached _start, whose return address is undefined */

	/* the same stack cut short: the walk stops where the copy ends */
	n = tf_symbolizer_unwind_ex(c.s, (uint32_t)c.f.pid, 0, c.regs, TF_REGS_MASK,
				    c.stack, 16, ips, 64, &truncated);
	assert_true(n >= 1 && n < 4);
	assert_true(truncated);
	/* max frames respected */
	n = tf_symbolizer_unwind(c.s, (uint32_t)c.f.pid, 0, c.regs, TF_REGS_MASK,
				 c.stack, c.stack_size, ips, 2);
	assert_int_equal(n, 2);

	tf_symbolizer_stats st;
	tf_symbolizer_stats_get(c.s, &st);
	assert_int_equal(st.unwinds, 3);
	assert_int_equal(st.unwind_failed, 1);    /* 16 bytes: not even past the leaf */
	assert_int_equal(st.unwind_truncated, 1); /* max reached */
	capture_stop(&c);
}

static void test_unwind_real_stack(void **state)
{
	(void)state;
	unwind_real_stack("symbolize_nofp");     /* CFI in .eh_frame */
	unwind_real_stack("symbolize_dbgframe"); /* CFI in .debug_frame */
}

static void test_unwind_bad_input(void **state)
{
	(void)state;
	captured c;
	uint64_t ips[64], regs[NREGS];
	uint8_t junk[4096];

	capture_start(&c, "symbolize_nofp");
	/* no ip in the mask: nothing */
	assert_int_equal(tf_symbolizer_unwind(c.s, (uint32_t)c.f.pid, 0, c.regs,
					      TF_REGS_MASK & ~(1ULL << TF_REG_IP), c.stack,
					      c.stack_size, ips, 64), 0);
	/* garbage stack: stops, never reads outside the copy */
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	size_t n = tf_symbolizer_unwind(c.s, (uint32_t)c.f.pid, 0, c.regs, TF_REGS_MASK,
					junk, sizeof(junk), ips, 64);
	assert_true(n >= 1 && n <= 64);
	/* an unknown process, a NULL stack: the leaf only */
	memcpy(regs, c.regs, sizeof(regs));
	n = tf_symbolizer_unwind(c.s, 99999999, 0, regs, TF_REGS_MASK, NULL, 0, ips, 64);
	assert_int_equal(n, 1);
	/* frame pointer fallback where there is no CFI: rbp chain in the copy */
	uint64_t fake[4] = { 0, 0x1234, 0, 0 };
	regs[6] = regs[7] + 0; /* rbp = sp: saved rbp at [sp], return address at [sp+8] */
	regs[8] = 0x10; /* an ip in no mapping */
	n = tf_symbolizer_unwind(c.s, (uint32_t)c.f.pid, 0, regs, TF_REGS_MASK,
				 (const uint8_t *)fake, sizeof(fake), ips, 64);
	assert_true(n >= 2);
	assert_int_equal(ips[1], 0x1234);

	tf_symbolizer_stats st;
	tf_symbolizer_stats_get(c.s, &st);
	assert_int_equal(st.unwinds, 4);
	assert_true(st.unwind_failed >= 2);
	capture_stop(&c);
}

/* The PLT's CFA is an expression of rsp and rip: 8 above rsp before an
 * entry's push, 16 after it. */
static void test_unwind_plt_expression(void **state)
{
	(void)state;
	captured c;
	uint64_t plt = 0, bias = 0, ips[4], regs[NREGS];
	char *path = fixture_path("symbolize_nofp");

	/* .plt's link-time address */
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstr;
	assert_int_equal(elf_getshdrstrndx(elf, &shstr), 0);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (strcmp(elf_strptr(elf, shstr, sh.sh_name), ".plt") == 0)
			plt = sh.sh_addr;
	}
	elf_end(elf);
	close(fd);
	assert_true(plt != 0);

	capture_start(&c, "symbolize_nofp");
	/* the load bias: where the file's offset 0 is mapped (PIE, vaddr 0) */
	char mp[64], line[4200];
	snprintf(mp, sizeof(mp), "/proc/%d/maps", (int)c.f.pid);
	FILE *fp = fopen(mp, "r");
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long a, z, off;
		if (strstr(line, "symbolize_nofp") &&
		    sscanf(line, "%llx-%llx %*s %llx", &a, &z, &off) == 3 && off == 0) {
			bias = a;
			break;
		}
	}
	fclose(fp);
	assert_true(bias != 0);

	uint64_t ret1 = c.regs[8], ret2 = c.regs[8] + 1;
	uint64_t stack[2] = { ret1, ret2 };
	memcpy(regs, c.regs, sizeof(regs));
	regs[7] = 0x7ffd00000000ULL;
	/* second PLT entry (the first is PLT0): offset 0 and offset 11 */
	regs[8] = bias + plt + 16;
	assert_int_equal(tf_symbolizer_unwind(c.s, (uint32_t)c.f.pid, 0, regs, TF_REGS_MASK,
					      (const uint8_t *)stack, sizeof(stack), ips, 2), 2);
	assert_int_equal(ips[1], ret1);
	regs[8] = bias + plt + 16 + 11;
	assert_int_equal(tf_symbolizer_unwind(c.s, (uint32_t)c.f.pid, 0, regs, TF_REGS_MASK,
					      (const uint8_t *)stack, sizeof(stack), ips, 2), 2);
	assert_int_equal(ips[1], ret2);
	capture_stop(&c);
	free(path);
}

static void test_frame_pointer_verdict(void **state)
{
	(void)state;
	char *fp_path = fixture_path("symbolize");
	fixture f;
	captured c;

	fixture_start(&f, fp_path, NULL);
	uint64_t fn = fixture_addr(&f, "fn sym_hot_loop", NULL);
	tf_symbolizer *s;
	assert_int_equal(tf_symbolizer_new(&s, NULL), 0);
	feed_maps(s, f.pid, false, true);
	fixture_stop(&f);
	assert_true(tf_symbolizer_has_frame_pointers(s, (uint32_t)f.pid, 0, fn));
	assert_true(tf_symbolizer_has_frame_pointers(s, (uint32_t)f.pid, 0, 0x10)); /* unknown */
	tf_symbolizer_free(s);
	free(fp_path);

	capture_start(&c, "symbolize_nofp");
	uint64_t nofp = fixture_addr(&c.f, "fn uw_level3", NULL);
	assert_false(tf_symbolizer_has_frame_pointers(c.s, (uint32_t)c.f.pid, 0, nofp));
	capture_stop(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unwind_real_stack),
		cmocka_unit_test(test_unwind_bad_input),
		cmocka_unit_test(test_unwind_plt_expression),
		cmocka_unit_test(test_frame_pointer_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

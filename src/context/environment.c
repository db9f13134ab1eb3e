/*
 * environment.c - the machine a run ran on, as facts a comparison can hold
 * side by side.
 *
 * A stored baseline was recorded by another job, often on another machine:
 * another CPU model, another number of cores, a hypervisor or none, a
 * frequency governor that boosts or not. Any of these moves every test's
 * cost, and a verdict must say so when the two sides differ. Each fact is
 * read from the kernel's files (nothing is run) and kept in the run file as
 * testflame.env.KEY=VALUE; a fact that cannot be read is left out, and only
 * facts both sides have are compared.
 *
 *   cpu        the CPU model ("model name", or the ARM part)
 *   cpu_flags  a hash of its feature flags (two hosts of one model may
 *              differ in what the hypervisor passes through)
 *   cpus       logical CPUs online; cores: physical cores
 *   memory     MemTotal, in GiB
 *   kernel     the kernel's release
 *   virt       the hypervisor (DMI vendor and product) or "none", and the
 *              container kind when in one
 *   governor   cpufreq's scaling governor; boost: turbo on or off
 *   runner     what the CI says of its runner: GitHub's image, GitLab's
 *              runner description and tags
 */
#include "testflame/context.h"
#include "testflame/record.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

/* The facts compared between two runs' environments, in the order a
 * message lists their differences. */
const char *const tf_environment_keys[] = {
	"cpu", "cpu_flags", "cpus", "cores", "memory", "virt", "governor", "boost", "runner",
	"kernel", NULL,
};

static void add(tf_env_facts *f, const char *key, const char *value)
{
	if (!value || !*value)
		return;
	tf_env_fact x = { tf_xstrdup(key), tf_xstrdup(value) };
	/* one line, printable: facts come from files anyone may have edited */
	for (char *c = x.value; *c; c++)
		if ((unsigned char)*c < ' ' || *c == 0x7f)
			*c = ' ';
	tf_vec_push(f, x);
}

static char *read_line(const char *path)
{
	tf_buf b = TF_BUF_INIT;
	char *s = NULL;
	if (tf_file_read(&b, path) == 0 && b.len) {
		size_t n = strcspn(b.ptr, "\n");
		while (n && isspace((unsigned char)b.ptr[n - 1]))
			n--;
		s = n ? tf_xstrndup(b.ptr, n) : NULL;
	}
	tf_buf_free(&b);
	return s;
}

/* /proc/cpuinfo: the model, the flags' hash, and the physical cores. */
static void cpuinfo(tf_env_facts *f)
{
	tf_buf b = TF_BUF_INIT;
	char *model = NULL, *flags = NULL;
	TF_VEC(uint64_t) cores = { 0 };
	long phys = -1;

	if (tf_file_read(&b, "/proc/cpuinfo") != 0) {
		tf_buf_free(&b);
		return;
	}
	for (char *line = b.ptr, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		char *k = line, *ke = colon, *v = colon + 1;
		while (ke > k && isspace((unsigned char)ke[-1]))
			ke--;
		*ke = '\0';
		while (isspace((unsigned char)*v))
			v++;
		if (!model && (!strcmp(k, "model name") || !strcmp(k, "Hardware") || !strcmp(k, "cpu model")))
			model = tf_xstrdup(v);
		else if (!flags && (!strcmp(k, "flags") || !strcmp(k, "Features")))
			flags = tf_xstrdup(v);
		else if (!strcmp(k, "physical id"))
			phys = atol(v);
		else if (!strcmp(k, "core id")) {
			uint64_t key = (uint64_t)(phys & 0xffffffff) << 32 | (uint64_t)(atol(v) & 0xffffffff);
			bool seen = false;
			for (size_t i = 0; i < cores.n && !seen; i++)
				seen = cores.v[i] == key;
			if (!seen)
				tf_vec_push(&cores, key);
		}
	}
	add(f, "cpu", model);
	if (flags) {
		char hex[20];
		snprintf(hex, sizeof(hex), "%016llx",
			 (unsigned long long)tf_hash_bytes(flags, strlen(flags), 0));
		add(f, "cpu_flags", hex);
	}
	if (cores.n) {
		char num[24];
		snprintf(num, sizeof(num), "%zu", cores.n);
		add(f, "cores", num);
	}
	free(model);
	free(flags);
	tf_vec_free(&cores);
	tf_buf_free(&b);
}

static void cpus_online(tf_env_facts *f)
{
	char *s = read_line("/sys/devices/system/cpu/online");
	long n = 0;
	for (char *p = s; p && *p;) {
		char *end;
		long a = strtol(p, &end, 10), z = a;
		if (end == p)
			break;
		if (*end == '-')
			z = strtol(end + 1, &end, 10);
		n += z - a + 1;
		p = *end == ',' ? end + 1 : end + strlen(end);
	}
	free(s);
	if (n > 0) {
		char num[24];
		snprintf(num, sizeof(num), "%ld", n);
		add(f, "cpus", num);
	}
}

static void memory(tf_env_facts *f)
{
	tf_buf b = TF_BUF_INIT;
	if (tf_file_read(&b, "/proc/meminfo") == 0) {
		const char *m = strstr(b.ptr, "MemTotal:");
		if (m) {
			char num[32];
			snprintf(num, sizeof(num), "%.1f", strtod(m + 9, NULL) / 1048576.0);
			add(f, "memory", num);
		}
	}
	tf_buf_free(&b);
}

static void virt(tf_env_facts *f)
{
	char *vendor = read_line("/sys/class/dmi/id/sys_vendor");
	char *product = read_line("/sys/class/dmi/id/product_name");
	tf_buf b = TF_BUF_INIT, cpu = TF_BUF_INIT;
	bool hyper = false;
	tf_record_caps caps;

	if (tf_file_read(&cpu, "/proc/cpuinfo") == 0)
		hyper = strstr(cpu.ptr, " hypervisor") != NULL;
	if (vendor || product)
		tf_buf_printf(&b, "%s%s%s", vendor ? vendor : "", vendor && product ? " " : "",
			      product ? product : "");
	else
		tf_buf_puts(&b, hyper ? "a hypervisor" : "none");
	tf_record_probe(&caps, 0);
	if (caps.container)
		tf_buf_printf(&b, ", %s container", caps.container);
	add(f, "virt", b.ptr);
	free(vendor);
	free(product);
	tf_buf_free(&b);
	tf_buf_free(&cpu);
}

static void frequency(tf_env_facts *f)
{
	char *gov = read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
	char *boost = read_line("/sys/devices/system/cpu/cpufreq/boost");
	char *no_turbo = read_line("/sys/devices/system/cpu/intel_pstate/no_turbo");
	add(f, "governor", gov);
	if (boost)
		add(f, "boost", strcmp(boost, "1") == 0 ? "on" : "off");
	else if (no_turbo)
		add(f, "boost", strcmp(no_turbo, "1") == 0 ? "off" : "on");
	free(gov);
	free(boost);
	free(no_turbo);
}

/* What the CI says of its runner. Names of one machine (RUNNER_NAME, a
 * pod's name) are left out: they differ from job to job on the same kind. */
static void runner(tf_env_facts *f, char *const *envp)
{
	tf_buf b = TF_BUF_INIT;
	const char *os = tf_env_get(envp, "ImageOS"), *ver = tf_env_get(envp, "ImageVersion");
	const char *desc = tf_env_get(envp, "CI_RUNNER_DESCRIPTION");
	const char *tags = tf_env_get(envp, "CI_RUNNER_TAGS");
	const char *env = tf_env_get(envp, "RUNNER_ENVIRONMENT");
	if (os)
		tf_buf_printf(&b, "%s%s%s", os, ver ? " " : "", ver ? ver : "");
	if (env && (os || b.len))
		tf_buf_printf(&b, " (%s)", env);
	if (desc)
		tf_buf_printf(&b, "%s%s", b.len ? ", " : "", desc);
	if (tags && *tags)
		tf_buf_printf(&b, "%stags %s", b.len ? ", " : "", tags);
	add(f, "runner", b.ptr);
	tf_buf_free(&b);
}

int tf_environment_detect(tf_env_facts *out, char *const *envp)
{
	struct utsname un;

	memset(out, 0, sizeof(*out));
	cpuinfo(out);
	cpus_online(out);
	memory(out);
	virt(out);
	frequency(out);
	runner(out, envp);
	if (uname(&un) == 0)
		add(out, "kernel", un.release);
	return 0;
}

const char *tf_env_facts_get(const tf_env_facts *f, const char *key)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (strcmp(f->v[i].key, key) == 0)
			return f->v[i].value;
	return NULL;
}

void tf_env_facts_free(tf_env_facts *f)
{
	for (size_t i = 0; f && i < f->n; i++) {
		free(f->v[i].key);
		free(f->v[i].value);
	}
	if (f)
		tf_vec_free(f);
}

void tf_environment_diff(tf_buf *out, const tf_profile *base, const tf_profile *head)
{
	for (const char *const *k = tf_environment_keys; *k; k++) {
		char key[40];
		snprintf(key, sizeof(key), "env.%s", *k);
		const char *a = tf_profile_meta(base, key), *b = tf_profile_meta(head, key);
		if (!a || !b || strcmp(a, b) == 0)
			continue;
		if (out->len)
			tf_buf_puts(out, "; ");
		/* the flags' hash says only that they differ */
		if (strcmp(*k, "cpu_flags") == 0)
			tf_buf_puts(out, "CPU feature flags differ");
		else
			tf_buf_printf(out, "%s '%s' vs '%s'", *k, a, b);
	}
}

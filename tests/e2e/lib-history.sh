# lib-history.sh - a small real suite for the history and bisect tests:
# six process tests (victim and five steady ones, about 20 ms of CPU each)
# of one C program named after each test, in a new git repository. The
# file `knobs` of the checkout holds "SLOWDOWN FAIL": victim_work() is
# SLOWDOWN percent slower, and with FAIL 1 the last test (epsilon) exits 1.

# history_repo DIR: the repository, its first commit, .testflame.yml
history_repo() {
	mkdir "$1" && cd "$1" || return 1
	git init -q -b main && git config user.email t@example.com && git config user.name t
	cat >w.c <<\EOF
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void spin(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1;
	sink = x;
}
__attribute__((noinline)) void victim_work(double slow) { spin((unsigned long)(20000000 * (1 + slow / 100))); }
__attribute__((noinline)) void steady_work(void) { spin(20000000); }
int main(int argc, char **argv)
{
	const char *n = strrchr(argv[0], '/');
	double slow = 0;
	int fail = 0;
	FILE *f = fopen("knobs", "r");
	(void)argc;
	n = n ? n + 1 : argv[0];
	if (f) {
		if (fscanf(f, "%lf %d", &slow, &fail) < 1)
			slow = 0;
		fclose(f);
	}
	if (!strcmp(n, "victim"))
		victim_work(slow);
	else
		steady_work();
	return strcmp(n, "epsilon") ? 0 : fail;
}
EOF
	for t in victim alpha beta gamma delta epsilon; do ln -s w $t; done
	printf 'for t in victim alpha beta gamma delta epsilon; do ./$t || exit 1; done\n' >suite.sh
	printf 'suite: mini\ncommand: "sh suite.sh"\nbuild: "cc -O1 -g -fno-omit-frame-pointer -o w w.c"\nfreq: 999\n' >.testflame.yml
	printf 'w\n*.pb.gz\n' >.gitignore
	echo "0 0" >knobs
	git add -A && git commit -qm "the suite" && cc -O1 -g -fno-omit-frame-pointer -o w w.c
}

# history_commit I SLOWDOWN FAIL [store]: commit I with those knobs, and
# with "store" record the suite and save it as the commit's baseline
history_commit() {
	echo "$2 $3" >knobs
	git add knobs && git commit -q --allow-empty -m "commit $1: slowdown $2" || return 1
	[ "${4:-}" = store ] || return 0
	"$TF" record -q -o run.pb.gz -- sh suite.sh >/dev/null 2>&1
	"$TF" baseline save -q --suite mini run.pb.gz
}

#!/usr/bin/env bash
# t0180-memory.sh - each test's memory (--memory, gate.memory) on a small
# C suite in a real git repository (tests/fixtures/memsuite.c): a branch
# where one test allocates ten times as much in grow_cache(), one leaks
# what leaky_parse() allocated, one holds its buffers at once (the same
# allocations, a higher peak), beside a program with its own malloc, a
# static program and an AddressSanitizer build. `testflame run` with
# gate.memory exits 3 naming the test and grow_cache at its line, in the
# terminal, report.md, report.json and the page's allocation diff; the leak
# and the peak are noted; what the sampler could not measure is said. The
# exact counts equal an independent LD_PRELOAD counter's; the suite's own
# output and exit status are those it has without testflame.
. "$(dirname "$0")/lib.sh"

if ! need cc git; then
	test_skip 'memory' 'needs cc and git'
	test_done
	exit 0
fi

mkdir repo && cd repo
git init -q -b main && git config user.email t@example.com && git config user.name t
for t in alloc10x leak peak steady1 steady2 steady3 steady4 steady5 steady6 steady7; do
	ln -s "$FIX/memsuite" "$t"
done
ln -s "$FIX/memcustom" custom
cat >suite.sh <<\SH
#!/bin/sh
# the suite: every test a program; the variant is the branch's
v=$(cat variant)
for t in alloc10x leak peak custom steady1 steady2 steady3 steady4 steady5 steady6 steady7; do
	./$t "$v" || exit 1
done
[ -x ./static ] && ./static
[ -x ./asan ] && ./asan
echo "suite done"
SH
chmod +x suite.sh
echo base > variant
printf 'suite: mem\ncommand: ./suite.sh\ngate:\n  memory: true\n  confirm: none\n' > .testflame.yml
printf 'testflame-report/\nstatic\nasan\n' > .gitignore
git add -A && git commit -qm "the suite"
# a static program (the sampler cannot load) and a sanitizer build (it
# must not), where the toolchain has them
printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void) { char *p = malloc(32); printf("static %%d\\n", p != 0); free(p); return 0; }\n' > static.c
cc -static -O1 -o static static.c 2>/dev/null || rm -f static
printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void) { char *p = malloc(32); p[0] = 1; printf("asan %%d\\n", p[0]); free(p); return 0; }\n' > asan.c
cc -fsanitize=address -g -o asan asan.c 2>/dev/null && ./asan >/dev/null 2>&1 || rm -f asan
rm -f static.c asan.c
cd "$SCRATCH"

test_expect_success 'the suite says the same, and exits the same, with the sampler in' '
	cd repo && { ./suite.sh >bare.out 2>bare.err; echo $? >bare.rc; } &&
	{ "$TF" record -q --memory -o ../rec.pb.gz -- ./suite.sh >tf.out 2>tf.err; echo $? >tf.rc; } &&
	cmp bare.out tf.out && cmp bare.err tf.err && cmp bare.rc tf.rc &&
	expect_contains tf.out "suite done" && rm -f bare.* tf.*
'

# an allocation counter of its own: malloc, calloc, realloc and free,
# counted as the sampler counts them (realloc: a block made and one freed)
cat >counter.c <<\C
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static void *(*m)(size_t), *(*c)(size_t, size_t), *(*r)(void *, size_t);
static void (*f)(void *);
static unsigned long allocs, bytes, frees;
static char boot[4096];
static size_t used;
static int busy;
static void init(void)
{
	busy = 1;
	m = dlsym(RTLD_NEXT, "malloc"); c = dlsym(RTLD_NEXT, "calloc");
	r = dlsym(RTLD_NEXT, "realloc"); f = dlsym(RTLD_NEXT, "free");
	busy = 0;
}
void *malloc(size_t n) { if (!m) { if (busy) { void *p = boot + used; used += (n + 15) & ~15UL; return p; } init(); } void *p = m(n); if (p) { allocs++; bytes += n; } return p; }
void *calloc(size_t k, size_t n) { if (!c) { if (busy) return malloc(k * n); init(); } void *p = c(k, n); if (p) { allocs++; bytes += k * n; } return p; }
void *realloc(void *q, size_t n) { if (!r) init(); if (q && n) frees++; else if (q) { frees++; } void *p = r(q, n); if (p && n) { allocs++; bytes += n; } return p; }
void free(void *p) { if (!p || ((char *)p >= boot && (char *)p < boot + sizeof(boot))) return; if (!f) init(); frees++; f(p); }
__attribute__((destructor)) static void done(void)
{
	unsigned long a = allocs, b = bytes, f = frees; /* before fopen's own */
	FILE *o = fopen(getenv("COUNT_OUT"), "w");
	if (o) { fprintf(o, "%lu %lu %lu\n", a, b, f); fclose(o); }
}
C

test_expect_success 'exact counts: those of an independent LD_PRELOAD counter' '
	cc -shared -fPIC -O1 -o counter.so counter.c -ldl &&
	for t in alloc10x leak peak; do
		(cd repo && COUNT_OUT=$SCRATCH/$t.count LD_PRELOAD=$SCRATCH/counter.so ./$t base >/dev/null) || exit 1
	done &&
	"$TF" show --json rec.pb.gz > rec.json &&
	python3 - <<\PY
import json
tests = {t["name"]: t for t in json.load(open("rec.json"))["tests"]}
for name in ("alloc10x", "leak", "peak"):
    want = [int(x) for x in open(name + ".count").read().split()]
    m = tests[name]["memory"]
    got = [m["allocs"], m["alloc_bytes"], m["frees"]]
    assert got == want, (name, "allocs, bytes, frees", got, "counted apart", want)
PY
'

test_expect_success 'the run file: pprof types go tool pprof reads, each test its memory' '
	"$TF" show rec.pb.gz > show.txt &&
	expect_contains show.txt "alloc_objects/count, alloc_space/bytes, inuse_space/bytes" &&
	grep -q "^  peak .* [0-9.]*MB$" show.txt &&
	{ ! need go || { go tool pprof -sample_index=alloc_space -top rec.pb.gz > top.txt 2>&1 &&
		grep -q "hold_buffers$" top.txt; }; }
'

test_expect_success 'the main branch keeps its baseline, with its memory' '
	cd repo && "$TF" run >out 2>err && expect_contains out "no baseline yet"
'

test_expect_code 3 'a branch whose grow_cache allocates ten times as much: exit 3, test and function named' '
	cd repo && git checkout -q -b head && echo head > variant && git commit -qam "head" &&
	"$TF" run >out 2>err; rc=$?
	expect_contains out "testflame memory:" &&
	grep -q "^  regressed .* alloc10x$" out &&
	grep -q "^ *+[0-9.]* [KM]iB .*grow_cache  memsuite.c:[0-9]*" out &&
	expect_contains out "MEMORY REGRESSION: 1 test allocates more by at least 10%" &&
	expect_contains out "leak ends with 40 more blocks live than in the base" &&
	expect_contains out "peak its live heap peaks at" &&
	expect_contains out "no more allocations, it holds them longer" &&
	expect_contains out "custom: the program has its own malloc" &&
	exit $rc
'

test_expect_success 'report.json and junit.xml: the memory verdicts, the function at its line, its caller' '
	cd repo && line=$(grep -n "keep\[i\] = malloc(2048);" "$TOP/tests/fixtures/memsuite.c" | cut -d: -f1) &&
	python3 - "$line" <<\PY
import json, sys
r = json.load(open("testflame-report/report.json"))
m = r["memory"]
assert m["gated"] is True and r["regressed"] is True, (m["gated"], r["regressed"])
tests = {t["name"]: t for t in m["tests"]}
assert tests["alloc10x"]["verdict"] == "regressed", tests["alloc10x"]
for name in ("leak", "peak", "steady1", "steady2", "steady3"):
    assert tests[name]["verdict"] == "unchanged", (name, tests[name]["verdict"], tests[name]["reason"])
f = tests["alloc10x"]["functions"][0]
assert (f["name"], f["line"], f["caller"]["name"]) == ("grow_cache", int(sys.argv[1]), "main"), f
a = tests["alloc10x"]
assert a["head"]["allocs"] - a["base"]["allocs"] == 450, (a["base"], a["head"])
# the programs the sampler could not enter are left out, and counted
assert "custom" not in tests and m["unmeasured"] >= 1, m["unmeasured"]
# junit.xml: the memory tests a suite of their own, alloc10x its failure
import xml.etree.ElementTree as ET
suites = {s.get("name"): s for s in ET.parse("testflame-report/junit.xml").getroot()}
ms = suites["mem (memory)"]
assert ms.get("failures") == "1", ms.attrib
fails = [tc.get("name") for tc in ms if tc.find("failure") is not None]
assert fails == ["alloc10x"], fails
assert ms.find("testcase/failure").get("type") == "memory-regression"
PY
'

test_expect_success 'report.md: the memory headline, the test, the function, the leak' '
	cd repo && md=testflame-report/report.md &&
	expect_contains $md "**🔺 Memory: 1 test allocates more, by at least 10% and 4.00 KiB**" &&
	expect_contains $md "#### Memory" &&
	expect_contains $md "| 🔺 more | <code>alloc10x</code> |" &&
	expect_contains $md "| <code>grow_cache</code> | +" &&
	expect_contains $md "<code>leak</code> ends with 40 more blocks live than in the base"
'

if need node && [ -x /usr/bin/chromium ] && [ -d "$TOP/tests/node/node_modules/playwright-core" ]; then
test_expect_success 'the page: index.html#memory draws the allocation diff of alloc10x' '
	cd repo && node "$TOP/tests/node/report-check.mjs" "testflame-report/index.html#memory" \
		--test alloc10x > page.txt 2>page.err || { cat page.err; exit 1; }
	expect_contains page.txt "graph Allocation diff flame graph (alloc_space): alloc10x" &&
	grep -q "^row regressed | alloc10x | " page.txt &&
	grep -q "^func grow_cache | .*memsuite.c:[0-9]* | " page.txt &&
	expect_contains page.txt "note leak ends with 40 more blocks live"
'
else
	test_skip 'the page' 'needs node, chromium and tests/node (make deps)'
fi

test_expect_success 'without gate.memory the allocations are reported, not judged' '
	cd repo && printf "suite: mem\ncommand: ./suite.sh\nmemory: true\ngate:\n  confirm: none\n" > .testflame.yml &&
	"$TF" run >out 2>err; rc=$?
	git checkout -q .testflame.yml &&
	expect_contains out "gate.memory is off: reported, not judged" &&
	python3 - "$rc" <<\PY
import json, sys
r = json.load(open("testflame-report/report.json"))
assert r["memory"]["gated"] is False and r["memory"]["regressed"] is True
# what fails the check is the time alone, of the tests the gate judges
# (the work of the suite script itself, "[outside tests]", is shown, not gated)
assert r["regressed"] == any(t["verdict"] == "regressed" and t["gated"] for t in r["tests"])
assert int(sys.argv[1]) == (3 if r["regressed"] else 0), sys.argv[1]
PY
'

test_expect_success 'what the sampler could not measure is said' '
	cd repo && r=testflame-report/report.json &&
	if [ -x static ]; then expect_contains out "(static)"; fi &&
	if [ -x asan ]; then expect_contains out "./asan links libasan.so"; fi
'

test_expect_success 'the samples stand for the bytes allocated, and the sampler loads nothing the program does not' '
	# 400,000 blocks of 16 B to 20 KB, about 7,800 samples at the default
	# rate: their weights add up to the exact bytes within sampling error
	# (1.1% a standard error; 6% allowed)
	printf "#include <stdlib.h>\nchar *volatile keep;\nint main(void) { unsigned x = 12345; for (int i = 0; i < 400000; i++) { x = x * 1103515245 + 12345; keep = malloc(16 + (x >> 8) %% 20000); free(keep); } return 0; }\n" > sizes.c &&
	cc -O1 -o sizes sizes.c &&
	"$TF" record -q --memory -o sizes.pb.gz -- ./sizes &&
	"$TF" show --json sizes.pb.gz > sizes.json &&
	{ ! need go || { go tool pprof -sample_index=alloc_space -unit=B -top sizes.pb.gz > sizes.top 2>&1 &&
		python3 - <<\PY
import json, re
exact = json.load(open("sizes.json"))["tests"][0]["memory"]["alloc_bytes"]
m = re.search(r"of (\d+)B total", open("sizes.top").read())
sampled = int(m.group(1))
assert abs(sampled / exact - 1) < 0.06, ("sampled", sampled, "exact", exact)
PY
	}; } &&
	# the library needs the C library and its loader, no more: each
	# library more is loaded (and relocated) in every process of the suite
	lib=$(dirname "$TF")/libtestflame-alloc.so &&
	readelf -d "$lib" | sed -n "s/.*(NEEDED).*\[\(.*\)\]/\1/p" > needed &&
	expect_contains needed libc.so &&
	! grep -v -E "^(libc|libdl|libpthread)\.so\.|^ld-linux" needed
'


# Every block sampled (a rate of one byte): 20,000 live at once at the
# peak, far past the live table's first page, then 1,000 left after
# tens of thousands of frees: the peak and what is left are exact.
test_expect_success 'many sampled blocks live at once: the peak and the blocks left are exact' '
	cat >many.c <<-\EOF &&
	#include <stdlib.h>
	static void *p[25000];
	int main(void) {
		for (int i = 0; i < 20000; i++) p[i] = malloc(100);
		for (int i = 0; i < 20000; i += 2) { free(p[i]); p[i] = NULL; }
		for (int i = 20000; i < 25000; i++) p[i] = malloc(100);
		for (int i = 24999, kept = 0; i >= 0; i--)
			if (p[i] && kept++ >= 1000) free(p[i]);
		return 0;
	}
	EOF
	cc -O1 -o many many.c &&
	"$TF" record -q --memory --memory-rate 1 -o many.pb.gz -- ./many &&
	"$TF" show --json many.pb.gz > many.json &&
	jget many.json "d[\"tests\"][0][\"memory\"][\"heap_peak\"]" >peak &&
	jget many.json "d[\"tests\"][0][\"memory\"][\"leaked\"]" >left &&
	expect_eq "$(cat peak)" 2000000 "heap peak" && expect_eq "$(cat left)" 100000 "bytes left"
'

# The files the sampler writes are made ahead by testflame (a pool): every
# process of a suite of 300 short programs takes one, the pool refilled
# as they go; without a pool, or when it has none ready, a process makes
# its own and is counted the same.
test_expect_success 'the sampler files made ahead: 301 processes, each one counted, most files from the pool' '
	printf "#!/bin/sh\ni=0\nwhile [ \$i -lt 300 ]; do ./steady1 base >/dev/null || exit 1; i=\$((i+1)); done\n" > repo/loop.sh &&
	chmod +x repo/loop.sh &&
	(cd repo && "$TF" record -q --memory -o ../loop.pb.gz -- ./loop.sh) &&
	"$TF" show --json loop.pb.gz > loop.json &&
	expect_eq "$(jget loop.json "d[\"metadata\"][\"alloc_processes\"]")" 301 "processes" &&
	# the pool holds 16 files when the suite starts: most of the 301
	# taken from it means it was refilled as they went (a process may
	# still find none ready while testflame waits for a CPU)
	pooled=$(jget loop.json "d[\"metadata\"][\"alloc_pooled\"]") &&
	{ [ "$pooled" -gt 200 ] && [ "$pooled" -le 301 ] || { echo "pooled: $pooled of 301" >&2; false; }; }
'

test_expect_success 'no file ready in the pool: the process makes its own; one ready: it takes it' '
	lib=$(dirname "$TF")/libtestflame-alloc.so && mkdir -p pool1 pool2 pool3 &&
	: > pool2/ctl && : > pool3/ctl &&
	fallocate -l $(( 4096 + 1023 * 64 + 1048576 )) pool3/p.0 &&
	for d in pool1 pool2 pool3; do
		(cd repo && TESTFLAME_ALLOC_DIR=$SCRATCH/$d LD_PRELOAD=$lib ./steady1 base >/dev/null) || exit 1
	done &&
	python3 - <<\PY
import glob, os, struct
def one(d):
    files = [f for f in os.listdir(d) if f[0].isdigit()]
    assert len(files) == 1, (d, sorted(os.listdir(d)))
    b = open(os.path.join(d, files[0]), "rb").read(24)
    assert b[:8] == b"TFALLOC1", (d, b[:8])
    return struct.unpack_from("<I", b, 20)[0] & 16
assert one("pool1") == 0 and one("pool2") == 0, "made its own file"
assert one("pool3") == 16, "took the pooled file"
assert not os.path.exists("pool3/p.0"), sorted(os.listdir("pool3"))
assert os.path.getsize("pool2/ctl") == 1 and os.path.getsize("pool3/ctl") == 1, "one claim each"
PY
'

test_expect_success 'a TMPDIR too long for the sampler: said so' '
	long=$SCRATCH/$(printf "%0200d" 0)/$(printf "%0200d" 1)/$(printf "%080d" 2) && mkdir -p "$long" &&
	(cd repo && TMPDIR=$long "$TF" record -q --memory -o ../long.pb.gz -- ./steady1 base >long.out) &&
	"$TF" show long.pb.gz > long.txt &&
	expect_contains long.txt "is too long for the allocation sampler (at most 486 characters)"
'

# Four threads, every block sampled: what the sampler allocates itself (a
# thread's first sample asks glibc for its stack's bounds) is neither
# counted as the program's nor moves the thread's next sample (it did: the
# first 64 KiB of each thread went unsampled, and 20% of what it left was
# missed). 3,000 blocks of 1,000 B a thread, 500 left: 2,000,000 B left,
# glibc's own for each thread apart (a block or none).
test_expect_success 'threads: every block sampled, what each left exact, the sampler not counted' '
	cat >threads.c <<-\EOF &&
	#include <pthread.h>
	#include <stdlib.h>
	#define N 3000
	static void *p[4][N];
	static void *run(void *arg) {
		void **q = arg;
		for (int i = 0; i < N; i++) q[i] = malloc(1000);
		for (int i = 0; i < N; i++) if (i % 6 != 1) { free(q[i]); q[i] = NULL; }
		return NULL;
	}
	int main(void) {
		pthread_t t[4];
		for (int k = 0; k < 4; k++) pthread_create(&t[k], NULL, run, p[k]);
		for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
		return 0;
	}
	EOF
	cc -O1 -pthread -o threads threads.c &&
	"$TF" record -q --memory --memory-rate 1 -o threads.pb.gz -- ./threads &&
	"$TF" show --json threads.pb.gz > threads.json &&
	python3 - <<\PY
import json
m = json.load(open("threads.json"))["tests"][0]["memory"]
assert 12000 <= m["allocs"] <= 12008 and 10000 <= m["frees"] <= 10008, (m["allocs"], m["frees"])
assert 2000000 <= m["leaked"] <= 2000000 + 4 * 4096, m["leaked"]
PY
'

test_expect_success 'a relative TMPDIR: a process that changes directory is measured too' '
	mkdir -p repo/reltmp &&
	(cd repo && TMPDIR=reltmp "$TF" record -q --memory -o ../rel.pb.gz -- sh -c "cd / && $SCRATCH/repo/steady1 base" >/dev/null) &&
	"$TF" show --json rel.pb.gz > rel.json &&
	expect_eq "$(jget rel.json "d[\"metadata\"][\"alloc_processes\"]")" 2 "processes"
'

test_done

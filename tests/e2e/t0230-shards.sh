#!/usr/bin/env bash
# t0230-shards.sh - one verdict for a suite split across parallel jobs, in a
# real repository: eight tests (bench/detect_suite.c, one program per test)
# that split themselves by TESTFLAME_SHARD_INDEX/TOTAL, which `run --shard
# K/N` exports (or CircleCI's CIRCLE_NODE_INDEX/TOTAL say). Each shard job
# only records its part (no comparison, no baseline); `merge` checks the
# shards and judges them as one run. Main is recorded by 3 shards of 3 runs
# each and its merge kept as the baseline; a PR splits the suite another
# way (the file `offset`), so tests move between shards and still compare
# as themselves. A slower victim_work(), run by shard 2 of the PR, fails
# the merge with exit 3 naming the test and the function; missing, doubled
# and mixed-up shards are one line and exit 2; a failing shard fails the
# merge with its own status.
. "$(dirname "$0")/lib.sh"

mkdir repo && cd repo
git init -q -b main && git config user.email t@example.com && git config user.name t
cp "$TOP/bench/detect_suite.c" . &&
cc -O1 -g -fno-omit-frame-pointer -o suite detect_suite.c || exit 1
for t in parse hash sorting victim alloc walk mix copy; do ln -s suite "$t"; done
cat >suite.sh <<\SH
# test i runs in shard (i + offset) % N + 1; a file fail-K fails shard K
# (unsharded, as the merge job runs it to confirm: all of them)
off=${SPLIT_OFFSET:-$(cat offset)} i=0 rc=0
n=${TESTFLAME_SHARD_TOTAL:-1} k=${TESTFLAME_SHARD_INDEX:-1}
for t in parse hash sorting victim alloc walk mix copy; do
	[ $(( (i + off) % n + 1 )) -eq "$k" ] && ./$t 1
	i=$((i + 1))
done
[ ! -f "fail-$k" ] || rc=1
exit $rc
SH
cat >.testflame.yml <<\YML
suite: mini
command: "sh suite.sh"
freq: 999
YML
printf 'testflame-report/\nsuite\n[mpqsx][0-9]/\nfail-*\n*.log\nout*\nerr*\nlist\nstored\nshow.json\n' >.gitignore
echo 0 >slowdown && echo 0 >offset
git add -A && git commit -qm "the suite"
cd "$SCRATCH"

tests_of() { # RUNFILE -> the tests it holds, sorted, one line
	"$TF" show --json "$1" | python3 -c '
import json, sys
print(" ".join(sorted(t["name"] for t in json.load(sys.stdin)["tests"] if not t["name"].startswith("["))))'
}

test_expect_success 'main: three shard jobs record their parts and keep no baseline' '
	cd repo &&
	"$TF" run -q --shard 1/3 --repeat 3 --report s1 >out1 2>err1 &&
	# CircleCI counts its parallel jobs from 0: job 1 is shard 2/3
	CIRCLECI=true CIRCLE_BRANCH=main CIRCLE_NODE_INDEX=1 CIRCLE_NODE_TOTAL=3 \
		"$TF" run --repeat 3 --report s2 >out2 2>err2 &&
	"$TF" run -q --shard 3/3 --repeat 3 --report s3 >out3 2>err3 &&
	expect_contains err2 "job 2 of 3 that circleci runs in parallel: recording shard 2/3" &&
	expect_contains out2 "shard 2/3 of '\''mini'\'': " &&
	expect_contains out2 "in 3 runs, written to s2/shard-2-of-3.pb.gz" &&
	expect_eq "$(tests_of s1/shard-1-of-3.pb.gz)" "mix parse victim" "shard 1" &&
	expect_eq "$(tests_of s2/shard-2-of-3.pb.gz)" "alloc copy hash" "shard 2" &&
	expect_eq "$(tests_of s3/shard-3-of-3.pb.gz)" "sorting walk" "shard 3" &&
	expect_eq "$("$TF" show --json s2/shard-2-of-3.pb.gz | python3 -c "import json,sys; m=json.load(sys.stdin)[\"metadata\"]; print(m[\"shard\"], m[\"runs\"])")" "2/3 3" "metadata" &&
	test ! -e s1/report.md && test ! -e s1/head.pb.gz &&
	"$TF" baseline list >list && expect_eq "$(wc -l <list)" 0 "baselines"
'

test_expect_success 'main: the merge has no baseline yet and keeps the merged suite as one' '
	cd repo && "$TF" merge s1 s2 s3 >out 2>err || { cat out err; exit 1; }
	expect_contains err "merged 3 shards of '\''mini'\''" &&
	expect_contains out "no baseline yet" &&
	expect_contains err "3 runs) in the git store" &&
	ref=refs/testflame/runs/$(git rev-parse HEAD) &&
	git cat-file blob "$ref:$(git ls-tree -r --name-only "$ref" | head -1)" >stored &&
	"$TF" show --json stored >show.json &&
	python3 -c "
import json
s = json.load(open(\"show.json\"))
assert s[\"metadata\"][\"runs\"] == \"3\" and s[\"metadata\"][\"shards\"] == \"3\", s[\"metadata\"]
assert \"shard\" not in s[\"metadata\"], s[\"metadata\"]
names = sorted(t[\"name\"] for t in s[\"tests\"] if not t[\"name\"].startswith(\"[\"))
assert names == sorted(\"parse hash sorting victim alloc walk mix copy\".split()), names
"
'

test_expect_success 'the next commit on main: its merge compares with the first and is kept too' '
	cd repo && git commit -q --allow-empty -m "main 2" &&
	for k in 1 2 3; do "$TF" run -q --shard $k/3 --repeat 3 --report m$k >m$k.log 2>&1 || exit 1; done &&
	"$TF" merge -v m1 m2 m3 >out 2>err || { cat out err; exit 1; }
	expect_contains out "1 commit before HEAD, 3 runs" &&
	expect_contains err "from 3 runs in 1 baselines" &&
	"$TF" baseline list >list && expect_eq "$(wc -l <list)" 2 "baselines"
'

# the PR's shards: another split, so every test moves to another shard
pr_shards() { # PREFIX [OPTIONS...]
	local p=$1 k
	shift
	for k in 1 2 3; do "$TF" run -q --shard $k/3 --report "$p$k" "$@" >"$p$k.log" 2>&1 || return 1; done
}

test_expect_success 'an unchanged PR split another way: tests compare across shards, exit 0' '
	cd repo && git checkout -q -b same && echo 1 >offset && git commit -qam "another split" &&
	pr_shards p && expect_eq "$(tests_of p2/shard-2-of-3.pb.gz)" "mix parse victim" "PR shard 2" &&
	# one retry: each test has one head run, which nothing can confirm
	# here, and a run this VM happened to slow flagged a test once in 8
	{ "$TF" merge p1 p2 p3 >out 2>err ||
	  { pr_shards p && "$TF" merge p1 p2 p3 >out 2>err; }; } || { cat out err; exit 1; }
	expect_contains out "the merge-base, 3 runs" &&
	expect_contains out "head: merged from 3 shards" &&
	python3 -c "
import json
r = json.load(open(\"testflame-report/report.json\"))
assert r[\"base\"][\"runs\"] == 3 and r[\"head\"][\"runs\"] == 1, (r[\"base\"], r[\"head\"])
assert \"judged on their runs as recorded\" in r[\"head_origin\"], r[\"head_origin\"]
v = {t[\"name\"]: t[\"verdict\"] for t in r[\"tests\"]}
# of the tests the gate judges (the work of the suite script itself,
# \"[outside tests]\", is shown, not gated)
gated = {t[\"name\"] for t in r[\"tests\"] if t[\"gated\"]}
assert not [n for n, x in v.items() if x in (\"new\", \"gone\", \"regressed\") and n in gated], v
assert len([n for n in v if not n.startswith(\"[\")]) == 8, v
" && expect_contains testflame-report/report.md "merged from 3 shards"
'

# The merge has no suite to rerun: one run per shard cannot tell a
# doubling from the job-to-job noise at the gate's alpha, three can (run
# --repeat 3). (+50% came out +45.4%, 95% CI +21% to +74%, p=0.005 across
# the suite's tests at a load of 8-10: three runs a side at that noise
# decide no less than about +60%.)
test_expect_code 3 'a PR whose shard 2 runs a slower victim: one report naming it and the function, exit 3' '
	cd repo && git checkout -q main && git checkout -q -b slow && echo 1 >offset && echo 100 >slowdown &&
	git commit -qam "victim: slower" && pr_shards q --repeat 3 &&
	expect_eq "$(tests_of q2/shard-2-of-3.pb.gz)" "mix parse victim" "PR shard 2" &&
	"$TF" merge q3 q1 q2 >out 2>err; rc=$?
	{ grep -q "regressed.*victim" out || { cat out err; false; }; } &&
	python3 -c "
import json
r = json.load(open(\"testflame-report/report.json\"))
v = {t[\"name\"]: t for t in r[\"tests\"]}
assert v[\"victim\"][\"verdict\"] == \"regressed\", v[\"victim\"]
# the time is spent in spin(), which victim_work() alone calls here: the
# function whose own cost grew leads, its caller only passed it on
fs = {f[\"name\"]: f for f in v[\"victim\"][\"functions\"]}
assert \"spin\" in fs and fs[\"spin\"][\"file\"].endswith(\"detect_suite.c\"), fs
others = [n for n, t in v.items() if t[\"verdict\"] == \"regressed\" and t[\"gated\"] and n != \"victim\"]
assert not others, others
" && expect_contains testflame-report/report.md "spin" && exit $rc
'

# One run per shard is too little to decide a doubling on: the merge job builds
# this tree and the merge-base (the config's build) and runs both whole,
# alternately, on its runner, as `run` confirms.
cat >confirm.yml <<\YML
suite: mini
command: "sh suite.sh"
build: "cc -O1 -g -fno-omit-frame-pointer -o suite detect_suite.c"
freq: 999
YML
test_expect_code 3 'one run per shard: the merge job confirms against the merge-base built here, exit 3' '
	cd repo && pr_shards c && "$TF" merge --config ../confirm.yml c1 c2 c3 >out 2>err; rc=$?
	expect_contains err "building this tree to confirm in the merge job" &&
	expect_contains err "checked out into" &&
	expect_contains out "confirmed: against the stored baseline, victim looks" &&
	python3 -c "
import json
r = json.load(open(\"testflame-report/report.json\"))
assert \"ran the whole suite on its runner to confirm\" in r[\"head_origin\"], r[\"head_origin\"]
assert r[\"base\"][\"runs\"] >= 3 and r[\"head\"][\"runs\"] >= 3, (r[\"base\"], r[\"head\"])
v = {t[\"name\"]: t for t in r[\"tests\"]}
assert v[\"victim\"][\"verdict\"] == \"regressed\", v[\"victim\"]
others = [n for n, t in v.items() if t[\"verdict\"] == \"regressed\" and t[\"gated\"] and n != \"victim\"]
assert not others, others
" || { cat out err; exit 1; }
	exit $rc
'

test_expect_code 2 'a missing shard: one line naming it, exit 2' '
	cd repo && "$TF" merge q1 q3 >out 2>err; rc=$?
	expect_eq "$(wc -l <err)" 1 "lines" &&
	expect_contains err "shard 2/3 of '\''mini'\'' missing: 2 of 3 run files given" && exit $rc
'

test_expect_code 2 'a doubled shard: one line naming both files, exit 2' '
	cd repo && mkdir -p q4 && cp q2/shard-2-of-3.pb.gz q4/ && "$TF" merge q1 q2 q3 q4 >out 2>err; rc=$?
	expect_eq "$(wc -l <err)" 1 "lines" &&
	expect_contains err "shard 2/3 is doubled: '\''q2/shard-2-of-3.pb.gz'\'' and '\''q4/shard-2-of-3.pb.gz'\''" &&
	exit $rc
'

test_expect_code 2 'shards of another commit, or of two splits of one: one line, exit 2' '
	cd repo && ! "$TF" merge s1 q2 q3 >out 2>err && expect_eq "$(wc -l <err)" 1 "lines" &&
	expect_contains err "are not shards of one commit" &&
	SPLIT_OFFSET=0 "$TF" run -q --shard 2/3 --report x2 >/dev/null 2>&1 &&
	"$TF" merge q1 x2 q3 >out 2>err; rc=$?
	expect_eq "$(wc -l <err)" 1 "lines" &&
	expect_contains err "was recorded by two shards of one commit" && exit $rc
'

test_expect_code 2 'usage: a bad --shard, --shard with --against' '
	cd repo && ! "$TF" run --shard 4/3 >out 2>err && expect_contains err "expected K/N" &&
	"$TF" run --shard 1/3 --against main >out 2>err; rc=$?
	expect_contains err "--shard records a part of the suite" && exit $rc
'

test_expect_code 1 'a failing shard: recorded with its status, and the merge fails saying which' '
	cd repo && touch fail-3 &&
	{ "$TF" run -q --shard 3/3 --report q3 >out 2>err; expect_eq "$?" 1 "shard status"; } &&
	"$TF" merge q1 q2 q3 --no-fail >out 2>err; rc=$?
	rm -f fail-3
	expect_contains err "shard 3/3 ('\''q3/shard-3-of-3.pb.gz'\''): the suite failed (exit status 1)" &&
	test -s testflame-report/report.json && exit $rc
'

test_done

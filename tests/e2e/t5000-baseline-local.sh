#!/usr/bin/env bash
# t5000-baseline-local.sh - `testflame baseline save/list/show/prune` on the
# default git store and the dir: store, in real repositories: what lands in
# refs/testflame/runs/<commit>, names that need encoding, prune order, and
# one-line errors with the right exit status for bad input.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-store.sh"

new_repo repo 3
folded prof.folded work 10
run_file run.pb.gz suite=unit event=cpu-clock sampler=perf arch=x86_64 \
	commit="$(git -C repo rev-parse HEAD)"

test_expect_success 'save a run file: suite and kind from its metadata' '
	(cd repo && "$TF" baseline save ../run.pb.gz) 2>err &&
	expect_contains err "suite '\''unit'\'', kind '\''cpu-clock-perf-x86_64'\''" &&
	expect_eq "$(baseline_files repo HEAD)" "unit/cpu-clock-perf-x86_64.pb.gz" &&
	git -C repo cat-file blob "refs/testflame/runs/$(git -C repo rev-parse HEAD):unit/cpu-clock-perf-x86_64.pb.gz" > stored &&
	cmp stored run.pb.gz
'

test_expect_success 'the baseline commit names the source commit, suite and kind' '
	head=$(git -C repo rev-parse HEAD) &&
	git -C repo log -1 --format=%B "refs/testflame/runs/$head" > msg &&
	expect_contains msg "testflame baseline for $head" &&
	expect_contains msg "unit/cpu-clock-perf-x86_64.pb.gz"
'

test_expect_success 'a folded profile needs --suite and --kind, and is stored as gzip pprof' '
	{ (cd repo && "$TF" baseline save ../prof.folded) 2>err; [ $? = 2 ]; } &&
	expect_contains err "pass --suite" &&
	(cd repo && "$TF" baseline save -q --suite unit --kind wall-ptrace-x86_64 ../prof.folded) &&
	git -C repo cat-file blob "refs/testflame/runs/$(git -C repo rev-parse HEAD):unit/wall-ptrace-x86_64.pb.gz" > stored2 &&
	[ "$(head -c 2 stored2 | od -An -tx1 | tr -d " ")" = 1f8b ]
'

test_expect_success 'saving another kind keeps the first; saving the same kind replaces it' '
	(cd repo && "$TF" baseline save -q --suite unit --kind cycles-perf-x86_64 ../prof.folded) &&
	expect_eq "$(baseline_files repo HEAD | wc -l)" 3 "files" &&
	folded other.folded other 99 &&
	(cd repo && "$TF" baseline save -q --suite unit --kind cycles-perf-x86_64 ../other.folded) &&
	expect_eq "$(baseline_files repo HEAD | wc -l)" 3 "files" &&
	head=$(git -C repo rev-parse HEAD) &&
	expect_eq "$(git -C repo rev-list --count refs/testflame/runs/$head)" 4 "baseline commits"
'

test_expect_success 'saving identical bytes again writes nothing' '
	head=$(git -C repo rev-parse HEAD) &&
	before=$(git -C repo rev-parse refs/testflame/runs/$head) &&
	(cd repo && "$TF" baseline save -q ../run.pb.gz) &&
	expect_eq "$(git -C repo rev-parse refs/testflame/runs/$head)" "$before"
'

test_expect_success 'suite names become safe path components and list back unchanged' '
	(cd repo && "$TF" baseline save -q --commit HEAD~1 --suite "../a b/c" --kind "x y" ../prof.folded) &&
	expect_eq "$(baseline_files repo HEAD~1)" "%2E.%2Fa%20b%2Fc/x%20y.pb.gz" &&
	(cd repo && "$TF" baseline list) > list &&
	expect_contains list "../a b/c" &&
	expect_contains list "x y"
'

test_expect_success 'a suite named after a long command line: a prefix and a hash' '
	long="make -C tests check TESTS=\"$(printf "t%03d " $(seq 1 60))\"" &&
	(cd repo && "$TF" baseline save -q --commit HEAD~2 --suite "$long" --kind k ../prof.folded &&
	 "$TF" baseline save -q --commit HEAD~2 --suite "$long" --kind k ../other.folded) &&
	f=$(baseline_files repo HEAD~2) &&
	expect_eq "$(echo "$f" | wc -l)" 1 "files (the second save replaced the first)" &&
	[ ${#f} -lt 200 ] && expect_contains <(echo "$f") "~" &&
	(cd repo && "$TF" baseline show HEAD~2) > show &&
	expect_contains show "make -C tests check TESTS=" && expect_contains show "..." &&
	git -C repo update-ref -d "refs/testflame/runs/$(git -C repo rev-parse HEAD~2)"
'

test_expect_success 'list: newest commit first, one line per file, filters' '
	(cd repo && "$TF" baseline list) > list &&
	expect_eq "$(wc -l < list)" 4 "lines" &&
	head=$(git -C repo rev-parse --short=12 HEAD) &&
	expect_eq "$(head -n 1 list | cut -c1-12)" "$head" &&
	(cd repo && "$TF" baseline list --suite unit --kind cycles-perf-x86_64) > one &&
	expect_eq "$(wc -l < one)" 1 "lines" &&
	(cd repo && "$TF" baseline list --suite nope) > none 2>err &&
	[ ! -s none ] && expect_contains err "no baselines of that suite and kind"
'

test_expect_success 'show: the commit, when it was recorded, the files and sizes' '
	(cd repo && "$TF" baseline show HEAD) > show &&
	expect_contains show "$(git -C repo rev-parse HEAD)" &&
	expect_contains show "c3" &&
	expect_contains show "recorded" &&
	expect_contains show "cpu-clock-perf-x86_64" &&
	expect_contains show "$(wc -c < run.pb.gz) bytes"
'

test_expect_code 1 'show of a commit without a baseline is an error' '
	(cd repo && "$TF" baseline show HEAD~2) 2>err; rc=$?
	expect_contains err "no baseline for" && exit $rc
'

test_expect_code 1 'an unknown revision is one clear line' '
	(cd repo && "$TF" baseline show no-such-rev) 2>err; rc=$?
	expect_contains err "unknown revision '\''no-such-rev'\''" &&
	expect_eq "$(wc -l < err)" 1 "lines" && exit $rc
'

test_expect_code 1 'a file that is not a profile is refused, nothing stored' '
	printf "\x00\x01garbage\xff" > junk.pb.gz &&
	before=$(git -C repo for-each-ref refs/testflame | wc -l) &&
	(cd repo && "$TF" baseline save --suite s --kind k ../junk.pb.gz) 2>err; rc=$?
	expect_contains err "junk.pb.gz" &&
	expect_eq "$(git -C repo for-each-ref refs/testflame | wc -l)" "$before" && exit $rc
'

test_expect_code 1 'a missing file is one clear line' '
	(cd repo && "$TF" baseline save --suite s --kind k ../nope.pb.gz) 2>err; rc=$?
	expect_contains err "cannot open '\''../nope.pb.gz'\''" && exit $rc
'

test_expect_code 1 'the git store outside a repository says so' '
	mkdir -p norepo && (cd norepo && "$TF" baseline list) 2>err; rc=$?
	expect_contains err "not a git repository" && expect_contains err "dir:PATH" && exit $rc
'

# the store opens repositories through the context's checks (testflame/git.h):
# libgit2 1.5 reports a repository of another user as missing, which the
# store used to pass on as "not in a git repository"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
test_expect_code 1 'a repository owned by someone else: the safe.directory fix' '
	git init -q -b main theirs && git -C theirs commit -q --allow-empty -m a &&
	chown -R nobody theirs &&
	(cd theirs && "$TF" baseline list) 2>err; rc=$?
	expect_contains err "owned by another user" &&
	expect_contains err "git config --global --add safe.directory $SCRATCH/theirs" &&
	expect_not_contains err "not a git repository" && exit $rc
'
else
test_skip 'a repository owned by someone else' 'needs root to give a repository to another user'
fi

test_expect_code 2 'usage errors exit 2' '
	"$TF" baseline 2>/dev/null; [ $? = 2 ] || exit 1
	"$TF" baseline frobnicate 2>/dev/null; [ $? = 2 ] || exit 1
	(cd repo && "$TF" baseline save) 2>/dev/null; [ $? = 2 ] || exit 1
	(cd repo && "$TF" baseline prune) 2>/dev/null; [ $? = 2 ] || exit 1
	(cd repo && "$TF" baseline prune --keep many) 2>/dev/null; [ $? = 2 ] || exit 1
	(cd repo && "$TF" baseline list --bogus) 2>/dev/null; [ $? = 2 ] || exit 1
	(cd repo && "$TF" baseline list --store nonsense:x) 2>err; rc=$?
	expect_contains err "unknown store '\''nonsense:x'\''" && exit $rc
'

test_expect_code 2 'pyroscope: wants an http(s) URL' '
	(cd repo && "$TF" baseline list --store pyroscope:127.0.0.1:1) 2>err; rc=$?
	expect_contains err "needs an http:// or https:// URL" && exit $rc
'

test_expect_success 'pyroscope: lists the git store it keeps beside Pyroscope' '
	(cd repo && "$TF" baseline list --store pyroscope:http://u:secretpass@127.0.0.1:1) >out 2>err &&
	(cd repo && "$TF" baseline list) >plain 2>&1 && diff plain out &&
	! grep -r secretpass out err
'

test_expect_success 'help lists the subcommands' '
	"$TF" baseline --help > help &&
	for s in list show save fetch push prune; do expect_contains help "baseline $s" || exit 1; done &&
	"$TF" help baseline > help2 && expect_contains help2 "baseline prune"
'

test_expect_success 'prune --keep N keeps the N newest by commit date' '
	new_repo p 0 &&
	for i in 1 2 3 4; do
		GIT_COMMITTER_DATE="2024-01-0$i 12:00:00 +0000" git -C p commit -q --allow-empty -m "p$i" || exit 1
	done &&
	# saved out of date order, so the save time cannot be what orders them
	for r in HEAD~1 HEAD HEAD~3 HEAD~2; do
		(cd p && "$TF" baseline save -q --commit $r --suite s --kind k ../prof.folded) || exit 1
	done &&
	(cd p && "$TF" baseline prune --keep 2) 2>err &&
	expect_contains err "removed 2 baselines" &&
	git -C p for-each-ref --format="%(refname)" refs/testflame/runs | sort > left &&
	printf "refs/testflame/runs/%s\n" $(git -C p rev-parse HEAD HEAD~1) | sort > want &&
	cmp left want &&
	(cd p && "$TF" baseline prune --keep 5) 2>err && expect_contains err "removed 0 baselines"
'

test_expect_success 'dir store: files under PATH/<commit>/<suite>/<kind>.pb.gz' '
	(cd repo && "$TF" baseline save -q --store dir:../cache ../run.pb.gz) &&
	head=$(git -C repo rev-parse HEAD) &&
	cmp "cache/$head/unit/cpu-clock-perf-x86_64.pb.gz" run.pb.gz &&
	(cd repo && "$TF" baseline save -q --store dir:../cache --suite "a/b" --kind k ../prof.folded) &&
	[ -f "cache/$head/a%2Fb/k.pb.gz" ] &&
	[ -z "$(find cache -name "*.tmp.*")" ] &&
	(cd repo && TESTFLAME_STORE=dir:../cache "$TF" baseline list) > dl &&
	expect_contains dl "a/b" && expect_eq "$(wc -l < dl)" 2 "lines" &&
	(cd repo && "$TF" baseline show --store dir:../cache) > ds &&
	expect_contains ds "c3" && expect_contains ds "cpu-clock-perf-x86_64"
'

test_expect_success 'dir store outside a repository takes full commit ids' '
	id=0123456789abcdef0123456789abcdef01234567 &&
	(cd norepo && "$TF" baseline save -q --store dir:../cache2 --commit $id --suite s --kind k ../prof.folded) &&
	[ -f cache2/$id/s/k.pb.gz ] &&
	(cd norepo && "$TF" baseline list --store dir:../cache2) > l2 && expect_contains l2 "0123456789ab" &&
	(cd norepo && "$TF" baseline save --store dir:../cache2 --commit HEAD --suite s --kind k ../prof.folded) 2>err;
	expect_contains err "no git repository"
'

test_expect_success 'dir store prune removes whole commit directories' '
	(cd repo && "$TF" baseline save -q --store dir:../cache --commit HEAD~2 --suite s --kind k ../prof.folded) &&
	(cd repo && "$TF" baseline prune --store dir:../cache --keep 1) &&
	expect_eq "$(ls cache)" "$(git -C repo rev-parse HEAD)"
'

test_expect_code 2 'fetch and push need the git store' '
	(cd repo && "$TF" baseline push --store dir:../cache) 2>err; rc=$?
	expect_contains err "has no remote" && exit $rc
'

# run, baseline and compare choose the store alike: --store, then store:
# in .testflame.yml, then $TESTFLAME_STORE (baseline and compare used to
# skip the config, and listed nothing where run had found baselines)
test_expect_success 'store: in the config is where baseline saves, lists and shows' '
	echo "store: dir:../cfgcache" > repo/.testflame.yml &&
	head=$(git -C repo rev-parse HEAD) &&
	(cd repo && "$TF" baseline save -q ../run.pb.gz) &&
	cmp "cfgcache/$head/unit/cpu-clock-perf-x86_64.pb.gz" run.pb.gz &&
	(cd repo && "$TF" baseline list) > cl &&
	expect_eq "$(wc -l < cl)" 1 "lines" && expect_contains cl "${head:0:12}" &&
	(cd repo && "$TF" baseline show) > cs && expect_contains cs "cfgcache" &&
	(cd repo && TESTFLAME_STORE=git "$TF" baseline list) > cl2 && cmp cl cl2 &&
	(cd repo && "$TF" baseline list --store git) > gl &&
	expect_contains gl "x y" && ! cmp -s cl gl
'

test_expect_success 'compare finds a revision in the config'"'"'s store' '
	(cd repo && "$TF" compare --report ../cmp-report HEAD ../run.pb.gz) > cmp.out &&
	expect_contains cmp.out "1 base run vs 1 head run" &&
	{ (cd repo && "$TF" compare --store git HEAD ../run.pb.gz) 2>cerr; [ $? = 2 ]; } &&
	expect_contains cerr "choose with --suite and --kind"
'

test_expect_code 2 'a broken store: in the config is one line naming it' '
	echo "store: s3://bucket" > repo/.testflame.yml &&
	(cd repo && "$TF" baseline list) 2>err; rc=$?
	expect_contains err ".testflame.yml:1:8: '"'"'store'"'"': unknown store '"'"'s3://bucket'"'"'" &&
	rm repo/.testflame.yml && exit $rc
'

test_done

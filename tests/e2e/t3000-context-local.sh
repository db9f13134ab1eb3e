#!/usr/bin/env bash
# t3000-context-local.sh - a developer's run: the git context of a real
# clone (branch, default branch from origin/HEAD, merge-base with it, the
# changed files and lines, dirty flag, detached HEAD), written into a run
# file that go tool pprof opens, and the TESTFLAME_* overrides.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/context-lib.sh"

test_expect_success 'a clone on a feature branch' '
	make_upstream &&
	git clone -q "file://$SCRATCH/up" work &&
	git -C work checkout -q feature
'

test_expect_success 'context: commit, branch, default branch, merge-base' '
	(cd work && clean "$TFC" context) > ctx.json 2> err &&
	expect_eq "$(jfield ctx.json ci)" local &&
	expect_eq "$(jfield ctx.json commit)" "$(git -C work rev-parse HEAD)" commit &&
	expect_eq "$(jfield ctx.json branch)" feature &&
	expect_eq "$(jfield ctx.json default_branch)" main &&
	expect_eq "$(jfield ctx.json base_branch)" main &&
	expect_eq "$(jfield ctx.json merge_base)" "$(git -C work merge-base HEAD origin/main)" merge-base &&
	expect_eq "$(jfield ctx.json dirty)" false &&
	expect_eq "$(jfield ctx.json shallow)" false &&
	expect_eq "$(jfield ctx.json pr)" null &&
	expect_eq "$(jfield ctx.json head_sha)" null &&
	expect_not_contains err warning
'

test_expect_success 'changed files and lines match git diff, renames followed' '
	python3 - ctx.json > changes.txt <<-\PY &&
	import json, sys
	for f in json.load(open(sys.argv[1]))["changes"]:
	    print(f["status"], f.get("old_path", "-"), f["path"], " ".join("%d-%d" % tuple(r) for r in f["lines"]))
	PY
	cat > want.txt <<-\W &&
	M - lib.c 3-4
	A - new.c 1-3
	R old.c moved.c 2-2
	W
	sort changes.txt > got.txt && sort want.txt > want.sorted &&
	diff -u want.sorted got.txt &&
	git -C work diff --name-status -M "$(jfield ctx.json merge_base)" HEAD > names.txt &&
	expect_contains names.txt "moved.c"
'

test_expect_success 'the metadata survives a run file, which go tool pprof reads' '
	(cd work && clean "$TFC" context -o "$SCRATCH/run.pb.gz") > back.json 2>/dev/null &&
	expect_eq "$(jfield back.json commit)" "$(git -C work rev-parse HEAD)" &&
	expect_eq "$(jfield back.json merge_base)" "$(jfield ctx.json merge_base)" &&
	expect_eq "$(jfield back.json changes)" "$(jfield ctx.json changes)" &&
	if need go; then
		go tool pprof -comments run.pb.gz > comments.txt 2>&1 &&
		expect_contains comments.txt "testflame.commit=$(git -C work rev-parse HEAD)" &&
		expect_contains comments.txt "testflame.branch=feature" &&
		expect_contains comments.txt "testflame.ci=local"
	fi
'

test_expect_success 'a modified tracked file makes the tree dirty, an untracked one does not' '
	echo junk > work/untracked.txt &&
	(cd work && clean "$TFC" context) > c1.json 2>/dev/null &&
	expect_eq "$(jfield c1.json dirty)" false &&
	echo 10 >> work/lib.c &&
	(cd work && clean "$TFC" context) > c2.json 2>/dev/null &&
	expect_eq "$(jfield c2.json dirty)" true &&
	git -C work checkout -q lib.c && rm work/untracked.txt
'

test_expect_success 'a detached HEAD has no branch but a merge-base' '
	git -C work checkout -q --detach HEAD~1 &&
	(cd work && clean "$TFC" context) > d.json 2>/dev/null &&
	expect_eq "$(jfield d.json branch)" null &&
	expect_eq "$(jfield d.json commit)" "$(git -C work rev-parse HEAD)" &&
	expect_eq "$(jfield d.json merge_base)" "$(git -C work merge-base HEAD origin/main)" &&
	git -C work checkout -q feature
'

test_expect_success 'on the default branch: no changes, a default-branch build' '
	git -C work checkout -q main &&
	(cd work && clean "$TFC" context) > m.json 2> m.err &&
	expect_eq "$(jfield m.json merge_base)" "$(git -C work rev-parse HEAD)" &&
	expect_eq "$(jfield m.json changes)" "[]" &&
	expect_contains m.err on_default_branch=true &&
	git -C work checkout -q feature
'

test_expect_success 'first-parent walk matches git log --first-parent' '
	git -C up checkout -q main && git -C up merge -q --no-ff -m merge feature &&
	clean "$TFC" walk -C up main > walk.txt &&
	git -C up log --first-parent --format=%H main | awk "{print NR-1, \$1}" > want-walk.txt &&
	diff -u want-walk.txt walk.txt
'

test_expect_success 'TESTFLAME_* variables override what git says' '
	(cd work && clean TESTFLAME_COMMIT=0000000000000000000000000000000000000001 \
		TESTFLAME_BRANCH=release TESTFLAME_PR=31 TESTFLAME_REPOSITORY=me/mine \
		TESTFLAME_RUN_URL=https://ci.example/run/4 "$TFC" context) > o.json 2>/dev/null &&
	expect_eq "$(jfield o.json commit)" 0000000000000000000000000000000000000001 &&
	expect_eq "$(jfield o.json branch)" release &&
	expect_eq "$(jfield o.json pr)" 31 &&
	expect_eq "$(jfield o.json repository)" me/mine &&
	expect_eq "$(jfield o.json run_url)" https://ci.example/run/4
'

test_expect_code 2 'a bad TESTFLAME_PR is a usage error with one line' '
	(cd work && clean TESTFLAME_PR=twelve "$TFC" context) > /dev/null 2> bad.err;
	rc=$?; cat bad.err >&2;
	test "$(wc -l < bad.err)" = 1 &&
	expect_contains bad.err "testflame: TESTFLAME_PR must be a pull request number or '\''none'\'', not '\''twelve'\''" &&
	exit $rc
'

test_expect_success 'outside a repository: one warning, no crash, no git keys' '
	mkdir -p norepo &&
	(cd norepo && clean CI=true "$TFC" context) > n.json 2> n.err &&
	expect_eq "$(jfield n.json ci)" generic &&
	expect_eq "$(jfield n.json commit)" null &&
	expect_eq "$(jfield n.json dirty)" null &&
	test "$(grep -c "^testflame: warning: " n.err)" = 1 &&
	expect_contains n.err "/norepo'\'' is not in a git repository"
'

if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
test_expect_success 'a repository owned by someone else: the safe.directory fix, which works' '
	git init -q -b main theirs && git -C theirs commit -q --allow-empty -m a &&
	chown -R nobody theirs &&
	(cd theirs && clean "$TFC" context) > t.json 2> t.err &&
	expect_eq "$(jfield t.json commit)" null &&
	expect_contains t.err "owned by another user" &&
	cmd=$(sed -n "s/.*run '"'"'\(git config --global --add safe.directory [^'"'"']*\)'"'"'.*/\1/p" t.err) &&
	expect_eq "$cmd" "git config --global --add safe.directory $SCRATCH/theirs" &&
	$cmd &&
	(cd theirs && clean "$TFC" context) > t2.json 2> t2.err &&
	expect_eq "$(jfield t2.json commit)" "$(git -C theirs rev-parse HEAD)" &&
	expect_not_contains t2.err "owned by another user"
'
else
test_skip 'a repository owned by someone else' 'needs root to give a repository to another user'
fi

test_done

#!/usr/bin/env bash
# t2020-bad-input.sh - `view` and `show` on bad command lines and bad files:
# one line naming the flag, the file (and the line), exit 2 for usage and 1
# for everything else, no crash, no output file left behind; and the
# recording options record and run share, parsed alike in both.
. "$(dirname "$0")/lib.sh"

printf 'main;hot 5\nmain;cold 2\n' > good.folded
$TF view --format pprof -o good.pb.gz good.folded || exit 1
gzip -dc good.pb.gz > good.pb

# run_bad WANT_RC TEXT... -- CMD ARGS: CMD exits WANT_RC, prints exactly one
# line on stderr holding every TEXT, nothing on stdout, and did not crash.
run_bad() {
	local want=$1; shift
	local texts=()
	while [ "$1" != -- ]; do texts+=("$1"); shift; done
	shift
	"$@" > out 2> err
	local rc=$?
	[ $rc = "$want" ] || { echo "exit $rc, expected $want" >&2; cat err >&2; return 1; }
	[ ! -s out ] || { echo "unexpected stdout:" >&2; cat out >&2; return 1; }
	[ "$(grep -vc "^usage:" err)" = 1 ] || { echo "expected one error line:" >&2; cat err >&2; return 1; }
	for t in "${texts[@]}"; do expect_contains err "$t" || return 1; done
}

for cmd in view show; do
	test_expect_success "$cmd: unknown option is a usage error naming it" "
		run_bad 2 \"unknown option '--bogus'\" -- \$TF $cmd --bogus good.folded &&
		run_bad 2 \"unknown option '-Z'\" -- \$TF $cmd -Z good.folded
	"
	test_expect_success "$cmd: no file, or two, is a usage error" "
		run_bad 2 'needs one FILE' -- \$TF $cmd &&
		run_bad 2 'one FILE, not 2' -- \$TF $cmd good.folded good.pb.gz
	"
	test_expect_success "$cmd: a missing file" "
		run_bad 1 \"cannot open 'no-such.pb.gz'\" 'No such file' -- \$TF $cmd no-such.pb.gz
	"
	test_expect_success "$cmd: a directory" "
		mkdir -p adir && run_bad 1 \"'adir' is a directory\" -- \$TF $cmd adir
	"
	test_expect_success "$cmd: an empty file" "
		: > empty && run_bad 1 \"'empty' is empty\" -- \$TF $cmd empty
	"
	test_expect_success "$cmd: a truncated gzip" "
		head -c \$((\$(stat -c %s good.pb.gz) - 12)) good.pb.gz > trunc.pb.gz &&
		run_bad 1 'trunc.pb.gz' 'truncated gzip data' -- \$TF $cmd trunc.pb.gz
	"
	test_expect_success "$cmd: a gzip whose bytes are corrupt" "
		cp good.pb.gz corrupt.pb.gz &&
		printf '\\377\\377\\377\\377' | dd of=corrupt.pb.gz bs=1 seek=20 conv=notrunc 2> /dev/null &&
		run_bad 1 'corrupt.pb.gz' -- \$TF $cmd corrupt.pb.gz
	"
	test_expect_success "$cmd: a truncated protobuf" "
		head -c \$((\$(stat -c %s good.pb) - 7)) good.pb > trunc.pb &&
		run_bad 1 \"'trunc.pb'\" 'not a valid pprof profile' -- \$TF $cmd trunc.pb
	"
	test_expect_success "$cmd: random binary bytes" "
		head -c 4096 /dev/urandom > noise.bin &&
		printf '\\0' >> noise.bin &&
		run_bad 1 \"'noise.bin'\" -- \$TF $cmd noise.bin
	"
	test_expect_success "$cmd: a gzip of something that is not a profile" "
		head -c 3000 /dev/urandom | tr -d '\\000' | head -c 2000 > junk && printf '\\0\\1\\2' >> junk &&
		gzip -c junk > junk.gz &&
		run_bad 1 \"'junk.gz'\" -- \$TF $cmd junk.gz
	"
	test_expect_success "$cmd: a folded file with a bad line names the line" "
		printf 'a;b 1\\na;c 2\\nthis line has no count\\n' > bad.folded &&
		run_bad 1 'bad.folded:3:' \"expected 'frame;frame;... COUNT'\" -- \$TF $cmd bad.folded
	"
	test_expect_success "$cmd: a folded file that changes its column count" "
		printf 'a;b 1 2\\na;c 3\\n' > cols.folded &&
		run_bad 1 'cols.folded:2:' -- \$TF $cmd cols.folded
	"
	test_expect_success "$cmd: a text file without stacks" "
		printf '# only a comment\\n\\n' > nostacks.txt &&
		run_bad 1 'nostacks.txt' 'no stacks' -- \$TF $cmd nostacks.txt
	"
done

# A file that is not a profile says what it is, not where folded stacks
# parsing gave up on it.
for cmd in view show compare; do
	test_expect_success "$cmd: gzip data, text or a tar archive that is no profile says what it is" '
		two() { if [ '$cmd' = compare ]; then echo "$1 $1"; else echo "$1"; fi; }
		printf "hello world\nthis is a log\n" | gzip > log.gz &&
		run_bad 1 "'\''log.gz'\'': gzip data that is not a pprof profile, nor folded stacks (line 1: expected" -- $TF '$cmd' $(two log.gz) &&
		printf "hello world\n" > log.txt &&
		run_bad 1 "'\''log.txt'\'' is not a pprof profile, nor folded stacks (line 1:" -- $TF '$cmd' $(two log.txt) &&
		tar czf files.tgz good.folded &&
		run_bad 1 "'\''files.tgz'\'': a gzip-compressed tar archive, not a profile" -- $TF '$cmd' $(two files.tgz) &&
		gzip -c good.folded > goodfolded.gz && $TF '$cmd' $(two goodfolded.gz) > /dev/null
	'
done

test_expect_success 'view: a bad --format value is a usage error listing the choices' '
	run_bad 2 "invalid value '\''xml'\'' for --format" "text, folded, pprof, speedscope" -- \
		$TF view --format xml good.folded
'

test_expect_success 'view: --top must be a number' '
	run_bad 2 "--top expects a whole number" -- $TF view --top many good.folded &&
	run_bad 2 "--top must be between" -- $TF view --top -3 good.folded
'

test_expect_success 'view: an unknown --value lists the sample types' '
	run_bad 1 "no sample type '\''cpu'\''" "it has: samples" -- $TF view --value cpu good.folded
'

test_expect_success 'view: an unknown --test lists some tests' '
	"$TOP/tests/node/install.sh" &&
	node "$TOP/tests/node/pprof-tool.mjs" make-run run.pb.gz &&
	run_bad 1 "has no test '\''nope'\''" "test_alpha" -- $TF view --test nope run.pb.gz &&
	run_bad 1 "has no test '\''x'\''" "carry no '\''test'\'' label" -- $TF view --test x good.folded
'

test_expect_success 'view: a failed conversion leaves no output file' '
	run_bad 1 "bad.folded:3:" -- $TF view --format pprof -o out.pb.gz bad.folded &&
	test ! -e out.pb.gz &&
	expect_eq "$(ls | grep -c "\.tmp\.")" 0 "temp files"
'

test_expect_success 'view: --top with another format only warns' '
	$TF view --format folded --top 3 good.folded > folded 2> err &&
	expect_contains err "warning: --top and --cum only apply to --format text" &&
	expect_eq "$(wc -l < folded)" 2 "folded lines"
'

# record and run take the recording options from one table, included in
# each command's own (TF_OPT_INCLUDE): listed, parsed and checked alike
test_expect_success 'record and run: the recording options, one table in both' '
	$TF run --help > rh && $TF record --help > ch &&
	for o in "--freq HZ" "--event EVENT" "--call-graph MODE" "-q, --quiet"; do
		expect_contains rh "$o" && expect_contains ch "$o" || exit 1
	done &&
	expect_contains rh "--against REV" && expect_contains ch "--output FILE" &&
	run_bad 2 "--freq must be between 1 and 100000, not 0" -- $TF run --freq 0 -- true &&
	run_bad 2 "invalid value '"'"'nope'"'"' for --event" -- $TF record --event nope -- true &&
	run_bad 2 "unknown option '"'"'-Z'"'"'" -- $TF run -qZ -- true
'

test_done

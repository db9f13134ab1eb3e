#!/usr/bin/env bash
# t0260-manual.sh - the manual, the completions and `make install`: every
# page renders with man(1) and shows every flag the command's --help prints
# (both come from the one option table), testflame(1) names every command,
# testflame.yml(5) every key of the config with an example line for each;
# bash and zsh complete commands, subcommands, flags and their values; make
# install DESTDIR lays out bin, man, completions and share/testflame where
# man(1) and the shells find them, and make uninstall leaves nothing.
. "$(dirname "$0")/lib.sh"

if ! need man; then
	test_skip 'the manual pages' 'man is missing (make deps)'
	test_done
	exit 0
fi
ROOT=$SCRATCH/root
test_expect_success 'make install DESTDIR PREFIX=/usr lays out bin, man, completions and share' '
	make -s -C "$TOP" BUILD="$BUILD" install DESTDIR="$ROOT" PREFIX=/usr \
		ZSHCOMPDIR=/usr/share/zsh/vendor-completions >install.log 2>&1 || { tail install.log; exit 1; }
	"$ROOT/usr/bin/testflame" --version | grep -q "^testflame " &&
	test -s "$ROOT/usr/share/man/man1/testflame.1" &&
	test -s "$ROOT/usr/share/man/man1/testflame-run.1" &&
	test -s "$ROOT/usr/share/man/man5/testflame.yml.5" &&
	test -s "$ROOT/usr/share/bash-completion/completions/testflame" &&
	test -s "$ROOT/usr/share/zsh/vendor-completions/_testflame" &&
	for f in actions/action.yml gitlab/testflame.gitlab-ci.yml circleci/orb.yml contrib/testflame.h \
		contrib/testflame.sh contrib/pytest_testflame.py contrib/go/testflame/testflame.go; do
		cmp "$TOP/$f" "$ROOT/usr/share/testflame/$f" || exit 1
	done &&
	MANPATH="$ROOT/usr/share/man" man -w testflame-run | grep -q "$ROOT/usr/share/man/man1/testflame-run.1"
'

MAN=$ROOT/usr/share/man
# Every page in one groff run (man(1) runs a pipeline a page: seconds for
# them all), split at each page's header line; groff warns of nothing.
# man(1) itself renders one, and must say the same.
CMDS=$("$TF" help | sed -n "s/^   \([a-z]*\) .*/\1/p")
test_expect_success 'every page renders, without a warning, and man(1) renders them so' '
	test "$(echo "$CMDS" | wc -l)" -ge 10 &&
	groff -k -t -man -Tutf8 -P-cbou -rLL=300n -ww $(for c in $CMDS; do echo "$MAN/man1/testflame-$c.1"; done) \
		"$MAN/man1/testflame.1" "$MAN/man5/testflame.yml.5" >all.txt 2>all.err &&
	{ [ ! -s all.err ] || { echo "groff warns:"; cat all.err; exit 1; }; } &&
	awk '"'"'/^TESTFLAME[-.A-Z]*\([15]\) / { f = tolower(substr($1, 1, index($1, "(") - 1)) ".txt" } f { print > f }'"'"' all.txt &&
	for c in $CMDS; do grep -q "^NAME" "testflame-$c.txt" || { echo "$c: no page"; exit 1; }; done &&
	MANWIDTH=300 man --warnings -l "$MAN/man1/testflame-run.1" >man-run.txt 2>man-run.err &&
	test ! -s man-run.err &&
	diff <(grep -v "^TESTFLAME-RUN(1)\|^testflame [0-9]" man-run.txt | tr -s " " | grep .) \
		<(grep -v "^TESTFLAME-RUN(1)" testflame-run.txt | tr -s " " | grep .)
'

# Every flag a command's --help prints ("-q, --quiet", "--freq HZ"), its
# subcommands' too (baseline list, hook install), is on its page: with
# help-C.txt and testflame-C.txt in DIR, one awk checks every command.
helps_of() { # c
	local h sub
	h=$("$TF" "$1" --help 2>/dev/null)
	echo "$h"
	for sub in $(echo "$h" | sed -n "s/^\(usage:\|   or:\) testflame $1 \([a-z][a-z]*\)\( .*\)\{0,1\}$/\2/p"); do
		"$TF" "$1" "$sub" --help 2>/dev/null
	done
}
flags_on_pages() { # dir commands...
	local d=$1 c files=
	shift
	for c in "$@"; do files="$files help-$c.txt testflame-$c.txt"; done
	(cd "$d" && awk '
		FNR == 1 { c = FILENAME; sub(/^(help|testflame)-/, "", c); sub(/\.txt$/, "", c)
			   help = FILENAME ~ /^help-/ }
		help {	# a flag of --help starts a line or follows a blank or comma
			s = $0
			while (match(s, /(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*/)) {
				f = substr(s, RSTART, RLENGTH); sub(/^[ ,]/, "", f)
				if (f != "--help") want[c " " f] = 1
				s = substr(s, RSTART + RLENGTH)
			}
		}
		!help {	s = $0
			while (match(s, /--?[a-zA-Z][a-zA-Z0-9-]*/)) {
				have[c " " substr(s, RSTART, RLENGTH)] = 1; s = substr(s, RSTART + RLENGTH)
			}
		}
		END {	for (k in want) if (!(k in have)) { split(k, p, " ")
				printf "%s: %s is not in testflame-%s(1)\n", p[1], p[2], p[1]; bad = 1 }
			exit bad }
	' $files)
}

test_expect_success 'every page of a command shows every flag its --help prints' '
	for c in $CMDS; do helps_of "$c" >"help-$c.txt"; done &&
	grep -q -- "--against" help-run.txt && grep -q -- "--keep" help-baseline.txt &&
	flags_on_pages . $CMDS
'

test_expect_success 'a flag missing from a page is caught: the check is not empty' '
	mkdir cut && cp help-run.txt cut/ && grep -v -e "--against" testflame-run.txt >cut/testflame-run.txt &&
	! flags_on_pages cut run >cut.out && expect_contains cut.out "run: --against is not in testflame-run(1)"
'

test_expect_success 'testflame(1) names every command and its page; the run page says its exit statuses' '
	for c in $CMDS; do
		grep -q "testflame-$c(1)" testflame.txt || { echo "no $c"; exit 1; }
	done &&
	grep -A12 "^EXIT STATUS" testflame-run.txt | grep -q "a test got slower beyond noise"
'

test_expect_success 'testflame.yml(5) lists every key of the config, each with a line of the example' '
	keys=$(sed -n "/^KEYS/,/^EXAMPLE/p" testflame.yml.txt | grep -oE "^       [a-z_]+(\.[a-z_]+)*$|^       [a-z_]+(\.[a-z_]+)*  " | tr -d " ") &&
	test "$(echo "$keys" | wc -l)" -ge 30 &&
	echo "$keys" | grep -qx gate.threshold && echo "$keys" | grep -qx attribution.frames &&
	missing=$(comm -23 <(echo "$keys" | sed "s/.*\.//" | sort -u) \
		<(sed -n "/^EXAMPLE/,\$p" testflame.yml.txt | grep -oE "(^| )[a-z_]+:" | tr -d " :" | sort -u)) &&
	{ [ -z "$missing" ] || { echo "no example line for:" $missing; exit 1; }; }
'

# The candidates for each line of words (one bash for them all): "a b|c"
# completes the words a b c, the last the one under the cursor.
complete_bash() {
	bash -c '. "$1"; while read -r line; do IFS="|" read -r -a COMP_WORDS <<<"$line|"
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _testflame; echo "${COMPREPLY[*]}"
	done' _ "$ROOT/usr/share/bash-completion/completions/testflame"
}
test_expect_success 'bash completes commands, subcommands, flags and their values' '
	complete_bash >got <<-\EOF &&
	testflame|ru
	testflame|run|--ev
	testflame|run|--event|
	testflame|record|--sampler|p
	testflame|run|--call-graph|=|d
	testflame|baseline|
	testflame|baseline|prune|--k
	testflame|compare|--store|
	testflame|hook|
	EOF
	cat >want <<-\EOF &&
	run
	--event
	auto cpu-clock instructions cycles wall
	perf ptrace
	dwarf
	list show save fetch push prune
	--keep
	git git: dir: pyroscope:
	install uninstall
	EOF
	diff want got
'

test_expect_success 'bash completes --suite with the suites of the store' '
	git init -q repo && cd repo && git commit -q --allow-empty -m one &&
	printf "t 5 main;work\n" | python3 "$TOP/tests/e2e/mkpprof.py" r.pb.gz --meta version=0.1.0 \
		--meta event=cpu-clock --meta sampler=perf --meta arch=x86_64 &&
	PATH=$BUILD:$PATH && "$TF" baseline save -q --suite "unit tests" r.pb.gz &&
	"$TF" baseline save -q --suite lint r.pb.gz &&
	printf "testflame|run|--suite|\ntestflame|run|--suite|u\n" | complete_bash >got &&
	printf "lint unit tests\nunit tests\n" | diff - got
'

if need zsh; then
	test_expect_success 'zsh: _arguments gets every flag with its help and values, _describe the commands' '
		zsh -f -c "
			_arguments() { print -rl -- \"\$@\"; }
			_describe() { print -rl -- \${(P)\${@[-1]}}; }
			compadd() { print -rl -- \"\$@\"; }
			fpath=($ROOT/usr/share/zsh/vendor-completions \$fpath); autoload -U _testflame
			t() { words=(\"\$@\"); CURRENT=\$#; _testflame; }
			t testflame \"\"; print SEP; t testflame run \"\"; print SEP; t testflame baseline \"\"
		" >zsh.txt 2>&1 &&
		grep -q "^run:record the suite" zsh.txt &&
		grep -qF -- "--event=[what to sample" zsh.txt &&
		grep -qF -- ":value:(auto cpu-clock instructions cycles wall)" zsh.txt &&
		grep -qF -- "-q[" zsh.txt && grep -qx "subs" zsh.txt
	'
else
	test_skip 'zsh completion' 'zsh is missing (make deps)'
fi

# the package: libgit2 among its Depends (opened at run time, so
# dpkg-shlibdeps does not see it), every ELF file in it stripped
# (lintian's error otherwise), and the allocation sampler the one
# embedded in the binary, so the installed testflame preloads its own
# copy instead of unpacking one
if need dpkg-deb dpkg-shlibdeps readelf; then
	test_expect_success 'make deb: stripped, lintian accepts it, the installed sampler is the one preloaded' '
		LINTIAN=no make -s -C "$TOP" BUILD="$BUILD" deb >deb.log 2>&1 || { tail deb.log; exit 1; }
		deb=$(ls "$BUILD"/testflame_*.deb) && dpkg-deb -x "$deb" pkg &&
		dpkg-deb -f "$deb" Depends >depends &&
		if ! grep -q "libgit2" depends; then fail "no libgit2 in Depends: $(cat depends)"; exit 1; fi &&
		for f in pkg/usr/bin/testflame pkg/usr/lib/testflame/libtestflame-alloc.so; do
			readelf -S -W "$f" >sections || exit 1
			if grep -E "\.(symtab|debug_[a-z]+) " sections; then fail "$f is not stripped"; exit 1; fi
		done &&
		(cd pkg/usr/bin && ./testflame record -q --memory -o "$SCRATCH/deb.pb.gz" -- \
			sh -c "echo \"\$LD_PRELOAD\"") >preload.out &&
		expect_eq "$(realpath "$(cat preload.out)")" "$(realpath pkg/usr/lib/testflame/libtestflame-alloc.so)" "preloaded" &&
		if command -v lintian >/dev/null; then lintian --fail-on error "$deb"; fi
	'
else
	test_skip 'make deb' 'dpkg-dev is missing (make deps)'
fi

test_expect_success 'make uninstall leaves nothing behind' '
	make -s -C "$TOP" BUILD="$BUILD" uninstall DESTDIR="$ROOT" PREFIX=/usr \
		ZSHCOMPDIR=/usr/share/zsh/vendor-completions >uninstall.log 2>&1 &&
	expect_eq "$(find "$ROOT" -type f | wc -l)" 0 "files left"
'

test_done

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
render() { MANWIDTH=300 man --warnings -l "$1"; }
# the flags a --help prints ("-q, --quiet", "--freq HZ")
flags() { grep -oE "(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*" | sed "s/^[ ,]//" | sort -u; }

test_expect_success 'every page of a command shows every flag its --help prints' '
	cmds=$("$TF" help | sed -n "s/^   \([a-z]*\) .*/\1/p") &&
	test "$(echo "$cmds" | wc -l)" -ge 10 &&
	for c in $cmds; do
		page=$MAN/man1/testflame-$c.1
		render "$page" >"$c.txt" 2>"$c.err" && grep -q "^NAME" "$c.txt" || { echo "$c: no page"; exit 1; }
		[ ! -s "$c.err" ] || { echo "$c: groff warns"; cat "$c.err"; exit 1; }
		helps="$("$TF" "$c" --help 2>/dev/null)"
		# a command with subcommands: theirs too (baseline list, hook install)
		for sub in $("$TF" "$c" --help 2>/dev/null | sed -n "s/^\(usage:\|   or:\) testflame $c \([a-z][a-z]*\)\( .*\)\{0,1\}$/\2/p"); do
			helps="$helps
$("$TF" "$c" "$sub" --help 2>/dev/null)"
		done
		for f in $(echo "$helps" | flags); do
			[ "$f" = --help ] && continue
			grep -qe "$f\b" "$c.txt" || { echo "$c: $f is not in testflame-$c(1)"; exit 1; }
		done
	done
'

test_expect_success 'a flag missing from a page is caught: the check is not empty' '
	sed "/against/d" "$MAN/man1/testflame-run.1" >cut.1 && render cut.1 >cut.txt &&
	! grep -q -e "--against" cut.txt && "$TF" run --help | flags | grep -qx -- --against
'

test_expect_success 'testflame(1) names every command and its page; the run page says its exit statuses' '
	render "$MAN/man1/testflame.1" >tf.txt &&
	for c in $("$TF" help | sed -n "s/^   \([a-z]*\) .*/\1/p"); do
		grep -q "testflame-$c(1)" tf.txt || { echo "no $c"; exit 1; }
	done &&
	render "$MAN/man1/testflame-run.1" | grep -A12 "^EXIT STATUS" | grep -q "a test got slower beyond noise"
'

test_expect_success 'testflame.yml(5) lists every key of the config, each with a line of the example' '
	render "$MAN/man5/testflame.yml.5" >yml.txt &&
	keys=$(sed -n "/^KEYS/,/^EXAMPLE/p" yml.txt | grep -oE "^       [a-z_]+(\.[a-z_]+)*$|^       [a-z_]+(\.[a-z_]+)*  " | tr -d " ") &&
	test "$(echo "$keys" | wc -l)" -ge 30 &&
	for k in $keys; do
		leaf=${k##*.}
		sed -n "/^EXAMPLE/,\$p" yml.txt | grep -qE "(^| )$leaf:" || { echo "$k has no example line"; exit 1; }
	done &&
	echo "$keys" | grep -qx gate.threshold && echo "$keys" | grep -qx attribution.frames
'

complete_bash() { # words... -> the candidates
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _testflame; echo "${COMPREPLY[*]}"' \
		_ "$ROOT/usr/share/bash-completion/completions/testflame" "$@"
}
test_expect_success 'bash completes commands, subcommands, flags and their values' '
	expect_eq "$(complete_bash testflame ru)" "run" &&
	expect_eq "$(complete_bash testflame run --ev)" "--event" &&
	expect_eq "$(complete_bash testflame run --event "")" "auto cpu-clock instructions cycles wall" &&
	expect_eq "$(complete_bash testflame record --sampler p)" "perf ptrace" &&
	expect_eq "$(complete_bash testflame run --call-graph = d)" "dwarf" &&
	expect_eq "$(complete_bash testflame baseline "")" "list show save fetch push prune" &&
	expect_eq "$(complete_bash testflame baseline prune --k)" "--keep" &&
	expect_eq "$(complete_bash testflame compare --store "")" "git git: dir: pyroscope:" &&
	expect_eq "$(complete_bash testflame hook "")" "install uninstall"
'

test_expect_success 'bash completes --suite with the suites of the store' '
	git init -q repo && cd repo && git commit -q --allow-empty -m one &&
	printf "t 5 main;work\n" | python3 "$TOP/tests/e2e/mkpprof.py" r.pb.gz --meta version=0.1.0 \
		--meta event=cpu-clock --meta sampler=perf --meta arch=x86_64 &&
	PATH=$BUILD:$PATH && "$TF" baseline save -q --suite "unit tests" r.pb.gz &&
	"$TF" baseline save -q --suite lint r.pb.gz &&
	expect_eq "$(complete_bash testflame run --suite "")" "lint unit tests" &&
	expect_eq "$(complete_bash testflame run --suite u)" "unit tests"
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

test_expect_success 'make uninstall leaves nothing behind' '
	make -s -C "$TOP" BUILD="$BUILD" uninstall DESTDIR="$ROOT" PREFIX=/usr \
		ZSHCOMPDIR=/usr/share/zsh/vendor-completions >uninstall.log 2>&1 &&
	expect_eq "$(find "$ROOT" -type f | wc -l)" 0 "files left"
'

test_done

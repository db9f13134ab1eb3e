#!/usr/bin/env bash
# t8040-doctor.sh - `testflame doctor`: one line per check (ok / warning /
# problem) with the exact fix, exit 0 when testflame can sample here at
# all: here, under a seccomp filter refusing perf_event_open (perf refused,
# ptrace usable), and refusing ptrace too (nothing works: exit 1).
. "$(dirname "$0")/lib.sh"

NOPERF=$FIX/noperf

test_expect_success 'every line is one check: ok, warning or problem' '
	"$TF" doctor >out 2>err &&
	test ! -s err &&
	head -n -1 out >checks && tail -1 out >verdict &&
	! grep -Ev "^(ok|warning|problem) +[a-zA-Z_ ()]+: " checks &&
	for c in perf_event_open perf_event_paranoid "hardware counters" seccomp ptrace sampler \
		"git repository" CI; do
		grep -q "^[a-z]* *$c: " checks || { echo "no check '\''$c'\''"; exit 1; }
	done &&
	expect_contains verdict "testflame can sample here"
'

test_expect_success 'what it says agrees with the machine' '
	p=$(cat /proc/sys/kernel/perf_event_paranoid) &&
	grep -q "perf_event_paranoid: $p" checks &&
	if grep -q "^Seccomp:[[:space:]]*0" /proc/self/status; then
		grep -q "^ok *seccomp: no filter" checks
	fi
'

# --follow auto: by a cgroup where testflame may make one and open events
# on it (root here), else inherited, with the reason and the fix
test_expect_success 'how the command is followed: by cgroup as root, inherited as nobody' '
	if [ "$(id -u)" = 0 ] && awk '\''$3 == "cgroup2"'\'' /proc/mounts | grep -q .; then
		grep -q "^ok *follow: by a cgroup of the command.s own" checks || exit 1
	fi &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TF" doctor >nobody.out 2>&1;
	# (without perf at all there is nothing to follow with)
	grep -q "perf_event_open: refused" nobody.out ||
	grep -E "^warning +follow: inherited \(.*\): a program shorter than a sampling period .*; fix: run testflame as root" nobody.out
'

test_expect_success 'every warning and problem line carries its fix' '
	! grep -E "^(warning|problem)" checks | grep -v "; fix: "
'

# The fix depends on what the process holds: a runtime's filter is made for
# the capabilities it grants, so one that refuses a holder of CAP_PERFMON
# (Podman's) wants SYS_ADMIN; without CAP_PERFMON, PERFMON is Docker's way.
# As nobody, noperf starts testflame without root's capabilities: both are
# copied where nobody may run them (a checkout in a 0700 directory, as
# mktemp -d makes, is not).
test_expect_success 'under a seccomp filter: perf refused, ptrace usable, exit 0' '
	"$NOPERF" "$TF" doctor >out &&
	grep -E "^(warning|problem) +perf_event_open: refused: .*seccomp" out >line &&
	expect_contains line "fix: " &&
	caps=$(awk "/^CapEff:/ { print \$2 }" /proc/self/status) &&
	if (( (0x$caps >> 38) & 1 )); then   # CAP_PERFMON
		expect_contains line "--cap-add SYS_ADMIN" && expect_not_contains line "--cap-add PERFMON"
	fi &&
	pub=$(mktemp -d /tmp/testflame-pub.XXXXXX) && chmod 755 "$pub" && cp "$NOPERF" "$TF" "$pub" &&
	{ setpriv --reuid=65534 --regid=65534 --clear-groups "$pub/noperf" "$pub/testflame" doctor \
		>nobody.out 2>&1; rm -rf "$pub"; } &&
	grep "perf_event_open: refused: .*seccomp" nobody.out | grep -qF -- "--cap-add PERFMON (Docker 20.10+; Podman" &&
	grep -q "^ok *ptrace: " out &&
	grep -q "^ok *sampler: ptrace" out &&
	expect_contains out "testflame can sample here, with ptrace" ||
	{ sed "s/^/#   /" out nobody.out 2>/dev/null; false; }
'

test_expect_success 'with ENOSYS (a filter that pretends the syscall is missing): same verdict' '
	"$NOPERF" --errno ENOSYS "$TF" doctor >out &&
	grep -q "perf_event_open: refused: a seccomp filter" out &&
	expect_contains out "with ptrace"
'

test_expect_success 'the python3 on PATH: read from its frames, or why not and the fix' '
	"$TF" doctor >out &&
	if command -v python3 >/dev/null; then
		grep -E "^ok +python: python3 is CPython 3\.[0-9]+(\.[0-9]+)? \(.*\): Python functions and lines are read from its frames" out
	fi &&
	old=$(ls -d /root/.pyenv/versions/3.6*/bin 2>/dev/null | head -1) &&
	if [ -n "$old" ]; then
		PATH=$old:$PATH "$TF" doctor >old.out &&
		grep -E "^warning +python: .*is CPython 3\.6, whose layout testflame does not know.*; fix: " old.out
	fi
'

test_expect_code 1 'where ptrace is refused too, nothing can sample: exit 1' '
	"$NOPERF" --no-ptrace "$TF" doctor >out; rc=$?
	grep -q "^problem *ptrace: refused" out && grep -q "^problem *sampler: none" out &&
	expect_contains out "testflame cannot sample here" && exit $rc
'

test_expect_code 1 'debug info of the test programs: DWARF, stripped (a problem: exit 1), a script' '
	objcopy --strip-all "$FIX/split7030" stripped &&
	objcopy --strip-debug "$FIX/split7030" nodwarf &&
	printf "#!/bin/sh\ntrue\n" >script.sh && chmod +x script.sh &&
	"$TF" doctor "$FIX/split7030" ./nodwarf ./script.sh sh >out &&
	"$TF" doctor "$FIX/split7030" ./stripped ./nodwarf ./script.sh sh >>out; rc=$?
	expect_contains out "1 of the programs given cannot be profiled as they are" &&
	grep -q "^ok *debug info: .*split7030.*: symbols and DWARF line info, build-id [0-9a-f]\{40\}" out &&
	grep -q "^problem *debug info: .*stripped.* is stripped.*; fix: build with -g" out &&
	grep -q "^warning *debug info: .*nodwarf.*: function names, but no DWARF.*fix: " out &&
	grep -q "^ok *debug info: .*script.sh.* is a script" out &&
	grep -q "debug info: .*/sh" out && exit $rc
'

test_expect_code 1 'a missing program is a problem line, and exit 1' '
	"$TF" doctor ./no-such-program >out; rc=$?
	grep -q "^problem *debug info: cannot open .*no-such-program" out && exit $rc
'

test_expect_success 'git: a checkout, its branch, a shallow clone, none' '
	git init -q -b topic repo && mkdir -p repo/a/b &&
	(cd repo/a/b && "$TF" doctor) >out &&
	grep -q "^ok *git repository: .*/repo.*, branch .topic." out &&
	git -C repo -c user.name=t -c user.email=t@t commit -q --allow-empty -m one &&
	git -C repo -c user.name=t -c user.email=t@t commit -q --allow-empty -m two &&
	git clone -q --depth 1 "file://$PWD/repo" shallow &&
	"$TF" doctor -C shallow >out &&
	grep -q "^warning *git repository: .*shallow clone.*fix: .*fetch-depth: 0" out &&
	mkdir -p norepo && (cd norepo && "$TF" doctor) >out &&
	grep -q "^warning *git repository: .* is not in a git repository" out
'

test_expect_success 'CI: the provider and its token' '
	env -i PATH="$PATH" GITHUB_ACTIONS=true "$TF" doctor >out &&
	grep -q "^ok *CI: GitHub Actions" out &&
	grep -q "^warning *CI token: no GITHUB_TOKEN.*fix: .*secrets.GITHUB_TOKEN" out &&
	env -i PATH="$PATH" GITHUB_ACTIONS=true GITHUB_TOKEN=secret-value "$TF" doctor >out &&
	grep -q "^ok *CI token: GITHUB_TOKEN is set" out && expect_not_contains out secret-value &&
	env -i PATH="$PATH" GITLAB_CI=true CI=true "$TF" doctor >out &&
	grep -q "^ok *CI: GitLab CI" out && grep -q "GITLAB_TOKEN" out &&
	env -i PATH="$PATH" "$TF" doctor >out && grep -q "^ok *CI: none detected" out
'

if grep -q "^ok *perf_event_open" checks; then
	test_expect_success 'the kernel'\''s sample rate limit is reported against --freq' '
		max=$(cat /proc/sys/kernel/perf_event_max_sample_rate) &&
		"$TF" doctor --freq 99 >out &&
		if [ "$max" -ge 1000 ]; then
			grep -q "^ok *perf_event_max_sample_rate: $max Hz" out
		else
			grep -q "^warning *perf_event_max_sample_rate: $max Hz.*fix: sudo sysctl" out
		fi
	'
else
	test_skip 'the sample rate limit check' 'perf_event_open is refused on this machine'
fi

test_expect_code 2 'an unknown flag is a usage error naming it' '
	"$TF" doctor --bogus 2>err; rc=$?
	expect_contains err "--bogus" && exit $rc
'

test_expect_success 'doctor is listed in help, and has its own help' '
	"$TF" help >out && grep -q "^ *doctor " out &&
	"$TF" help doctor >out && expect_contains out "testflame doctor" && expect_contains out "--freq"
'

test_done

# lib-record.sh - the cases every sampler must pass, written once for the
# perf scripts (t0100, t0110) and the ptrace scripts (t8000, t8010). A
# script sets, before calling them:
#
#   SAMPLER   perf or ptrace: what the run files must say was used
#   WITH      the command that makes it so: nothing for perf, $FIX/noperf
#             (a seccomp filter that refuses perf_event_open) for ptrace
#   N         0 or 1: keeps the long-lived processes of the two scripts
#             apart for pgrep, should they ever run side by side
#   LABEL     what the titles say (default: $SAMPLER)
#
# Bodies are eval'd by test_expect_success, so they read these variables
# when they run; $WITH is left unquoted on purpose (empty for perf).

# The command's exit statuses, signals and stdio, as without testflame.
record_process_cases() {
	for code in 0 1 7; do
		test_expect_code $code "exit status $code passes through (${LABEL:-$SAMPLER})" "
			\$WITH \"\$TF\" record -q -o r$code.pb.gz -- sh -c 'exit $code' && exit 0
		"
	done

	test_expect_code 137 "a SIGKILLed command gives 128+9 (${LABEL:-$SAMPLER})" '
		$WITH "$TF" record -q -o k.pb.gz -- sh -c "kill -9 \$\$"
	'

	test_expect_success "the signal death is in the run file too (${LABEL:-$SAMPLER})" '
		go tool pprof -comments k.pb.gz 2>/dev/null >c.txt &&
		expect_contains c.txt "testflame.exit_status=137" &&
		expect_contains c.txt "testflame.sampler=$SAMPLER"
	'

	test_expect_success "stdin, stdout, stderr, environment and cwd are the command's (${LABEL:-$SAMPLER})" '
		mkdir -p sub && cd sub &&
		echo hello-in | TF_PROBE=probe-value $WITH "$TF" record -q -o ../io.pb.gz -- \
			sh -c "cat; echo \$TF_PROBE; pwd; echo to-stderr >&2" >out 2>errout &&
		printf "hello-in\nprobe-value\n%s\n" "$PWD" >want &&
		cmp want out && expect_eq "$(cat errout)" "to-stderr"
	'

	test_expect_success "SIGINT to testflame reaches the command and the profile is still written (${LABEL:-$SAMPLER})" '
		# job control: background jobs keep SIGINT (bash ignores it otherwise);
		# and SIGINT ignored by whatever started this suite (a job started in
		# the background) is inherited by the command, which would rightly
		# ignore it: reset it, as an interactive shell would have it
		set -m
		env --default-signal=INT $WITH "$TF" record -q -o int.pb.gz -- "$FIX/split7030" 100$N &
		tf=$!
		wait_for_proc "^$FIX/split7030 100$N" && sleep 0.5 &&
		kill -INT $tf && wait $tf; rc=$?
		expect_eq $rc 130 "exit status" && test -s int.pb.gz &&
		go tool pprof -comments int.pb.gz 2>/dev/null >c.txt &&
		expect_contains c.txt "testflame.interrupted=true" &&
		expect_contains c.txt "testflame.sampler=$SAMPLER"
	'

	test_expect_success "SIGTERM is forwarded too (${LABEL:-$SAMPLER})" '
		$WITH "$TF" record -q -o term.pb.gz -- sleep 77.$((25 + 50 * N)) &
		tf=$!
		wait_for_proc "^sleep 77.$((25 + 50 * N))" &&
		kill -TERM $tf && wait $tf; rc=$?
		expect_eq $rc 143 "exit status" && test -s term.pb.gz
	'

	test_expect_success "if testflame is killed, the whole tree dies with it (${LABEL:-$SAMPLER})" '
		a=9$((1 + 2 * N)).5 b=9$((2 + 2 * N)).5
		$WITH "$TF" record -q -o kill.pb.gz -- sh -c "sleep $a & sleep $b & wait" &
		tf=$!
		wait_for_proc "^sleep $b" &&
		kill -KILL $tf; wait $tf 2>/dev/null
		for i in $(seq 50); do pgrep -f "sleep ($a|$b)" >/dev/null || break; sleep 0.1; done
		! pgrep -f "sleep ($a|$b)"
	'
}

# The whole tree: short-lived processes, threads, a suite under make. The
# threads' `go tool pprof -top` stays in thr.txt and the example project,
# built, in ex/, for the script's own cases after these. The fork/exec
# tree runs itself again through /proc/self/exe, which the kernel names
# "exe": its tests are named after the program.
record_tree_cases() { # FREQ (of the fork/exec tree)
	TREE_FREQ=$1

	test_expect_success "a fork/exec tree of 15 short processes: every one is present (${LABEL:-$SAMPLER})" '
		$WITH "$TF" record -q --freq $TREE_FREQ -o tree.pb.gz -- "$FIX/forktree" 3 2 &&
		go tool pprof -comments tree.pb.gz 2>/dev/null | grep -q "testflame.sampler=$SAMPLER" &&
		go tool pprof -raw tree.pb.gz 2>/dev/null >raw.txt &&
		grep -o "pid:\[[0-9]*\]" raw.txt | sort -u >pids &&
		expect_eq "$(wc -l <pids)" 15 "distinct pids with samples" &&
		grep -q "test:\[forktree\]" raw.txt && ! grep -q "test:\[exe\]" raw.txt &&
		go tool pprof -top tree.pb.gz 2>/dev/null >top.txt &&
		expect_contains top.txt leaf_work
	'

	test_expect_success "processes of a few milliseconds: their mappings were seen in time (${LABEL:-$SAMPLER})" '
		go tool pprof -traces tree.pb.gz 2>/dev/null >traces.txt &&
		grep -q "leaf_work" traces.txt && grep -q "main" traces.txt &&
		! grep -q "^ *0x" traces.txt
	'

	test_expect_success "8 threads: every worker function and thread is sampled (${LABEL:-$SAMPLER})" '
		$WITH "$TF" record -q --freq 999 -o thr.pb.gz -- "$FIX/threads8" 8 20 &&
		go tool pprof -top thr.pb.gz 2>/dev/null >thr.txt &&
		for i in 0 1 2 3 4 5 6 7; do expect_contains thr.txt "worker_$i" || exit 1; done &&
		go tool pprof -raw thr.pb.gz 2>/dev/null | grep -o "tid:\[[0-9]*\]" | sort -u >tids &&
		test "$(wc -l <tids)" -ge 8
	'

	test_expect_success "the example suite under make: all its test programs appear (${LABEL:-$SAMPLER})" '
		cp -r "$TOP/examples" ex && make -s -C ex all >/dev/null &&
		$WITH "$TF" record -q -o ex.pb.gz -- make -s -C ex check >out &&
		expect_contains out "test_spawn: ok" &&
		go tool pprof -raw ex.pb.gz 2>/dev/null >raw.txt &&
		for p in test_matrix test_primes test_sort test_threads rle_helper; do
			grep -q "process:\[$p\]" raw.txt || { echo "missing process $p"; exit 1; }
		done &&
		go tool pprof -top ex.pb.gz 2>/dev/null >top.txt &&
		for f in matrix_multiply primes_sieve sort_merge hash_fnv1a rle_compress; do
			expect_contains top.txt $f || exit 1
		done
	'
}

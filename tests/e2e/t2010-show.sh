#!/usr/bin/env bash
# t2010-show.sh - `testflame show` and `show --json` on a file shaped like a
# run file but written by a third-party encoder (Datadog's pprof-format, in
# tests/node/pprof-tool.mjs): metadata, totals with units, losses, per-test
# and per-process tables (wall time, attribution source, exit status, build
# steps apart), and names that need escaping. Also on files that
# are not ours (folded stacks), where the metadata is simply absent.
. "$(dirname "$0")/lib.sh"

"$TOP/tests/node/install.sh" || exit 1
node "$TOP/tests/node/pprof-tool.mjs" make-run run.pb.gz || exit 1

# Read one value out of JSON with node: jq-like path as JS expression on `d`.

test_expect_success 'text: header, sorted metadata, totals with units' '
	$TF show run.pb.gz > show.txt &&
	expect_contains show.txt "File: run.pb.gz" &&
	expect_contains show.txt "Sample types: samples/count, cpu/nanoseconds (default)" &&
	expect_contains show.txt "Period: 10.10ms of cpu" &&
	expect_contains show.txt "Time: 2024-05-01T12:00:00Z" &&
	expect_contains show.txt "Duration: 1.50s" &&
	sed -n "/^Metadata:/,/^$/p" show.txt | awk "NF >= 2 { print \$1 }" > keys &&
	sort -c keys &&
	expect_eq "$(wc -l < keys)" 21 "metadata keys" &&
	grep -q "^  unwinder     auto fp=120 dwarf=30$" show.txt &&
	grep -q "^  samples        100$" show.txt &&
	grep -q "^  cpu            1.01s$" show.txt
'

test_expect_success 'text: lost, throttled, unresolved and truncated are shown' '
	grep -q "^  lost           2$" show.txt &&
	grep -q "^  throttled      1$" show.txt &&
	grep -q "^  unresolved     3$" show.txt &&
	grep -q "^  truncated      4$" show.txt &&
	grep -q "^  unsymbolized   0 of 5 locations$" show.txt
'

test_expect_success 'text: per-test table, largest first, unsampled tests too' '
	sed -n "/^Tests (4):/,/^$/p" show.txt > tests.txt &&
	grep -q "^  test  *samples   share        cpu       wall source   exit$" tests.txt &&
	grep -q "^  test_alpha  *60  60.00%   606.06ms      1.50s process     0$" tests.txt &&
	grep -q "^  test_beta  *30  30.00%   303.03ms      400ms markers     -$" tests.txt &&
	grep -q "^  weird \"test\" <x>  *10  10.00%   101.01ms          - -           -$" tests.txt &&
	grep -q "^  test_gamma  *0   0.00%  *0        2ms process     1$" tests.txt &&
	expect_eq "$(awk "NR > 2 && NF { print \$1 }" tests.txt | tr "\n" " ")" "test_alpha test_beta weird test_gamma " "order"
'

test_expect_success 'text: per-process table with distinct pids and threads' '
	grep -q "^  app  *90  *2  *3$" show.txt &&
	grep -q "^  helper  *10  *1  *3$" show.txt
'

test_expect_success 'json: parses, and says the same' '
	$TF show --json run.pb.gz > show.json &&
	expect_eq "$(json show.json d.totals.samples)" 100 &&
	expect_eq "$(json show.json d.totals.value)" 1010101000 &&
	expect_eq "$(json show.json d.totals.unit)" nanoseconds &&
	expect_eq "$(json show.json d.totals.lost)" 2 &&
	expect_eq "$(json show.json d.totals.truncated)" 4 &&
	expect_eq "$(json show.json d.default_sample_type)" cpu &&
	expect_eq "$(json show.json d.metadata.unwinder)" "auto fp=120 dwarf=30" &&
	expect_eq "$(json show.json "Object.keys(d.metadata).length")" 21 &&
	expect_eq "$(json show.json d.time)" 2024-05-01T12:00:00Z &&
	expect_eq "$(json show.json "d.tests.map(t => t.name).join()")" "test_alpha,test_beta,weird \"test\" <x>,test_gamma" &&
	expect_eq "$(json show.json "d.tests[0].samples")" 60 &&
	expect_eq "$(json show.json "d.tests[0].share")" 0.6 &&
	expect_eq "$(json show.json "d.tests[3].sampled")" false &&
	expect_eq "$(json show.json "d.tests[0].wall_ns")" 1500000000 &&
	expect_eq "$(json show.json "d.tests[0].source")" process &&
	expect_eq "$(json show.json "d.tests[0].exit")" 0 &&
	expect_eq "$(json show.json "d.tests[2].exit")" null &&
	expect_eq "$(json show.json "d.tests[3].exit")" 1 &&
	expect_eq "$(json show.json d.build)" null &&
	expect_eq "$(json show.json "d.processes[1]")" "{\"name\":\"helper\",\"samples\":10,\"pids\":1,\"threads\":3}"
'

test_expect_success 'build steps are reported apart from the tests' '
	node "$TOP/tests/node/pprof-tool.mjs" make-run build.pb.gz --build &&
	$TF show build.pb.gz > build.txt &&
	expect_contains build.txt "Tests (4):" &&
	! grep -q "^  \[build\]" build.txt &&
	expect_contains build.txt "Build steps (not tests): 5 samples, 4.76%, 50.51ms, 90ms wall" &&
	grep -q "^  cc1  *5  *1  *1$" build.txt &&
	$TF show --json build.pb.gz > build.json &&
	expect_eq "$(json build.json d.tests.length)" 4 &&
	expect_eq "$(json build.json d.build.name)" "[build]" &&
	expect_eq "$(json build.json d.build.samples)" 5 &&
	expect_eq "$(json build.json d.build.source)" build
'

# Names with quotes, control characters and bytes that are not UTF-8.
printf 'main;odd"quote\\back\tslash 5\nmain;bad\377\376utf8 3\nmain;new\001line 2\n' > odd.folded

test_expect_success 'json: hostile names stay valid JSON and valid UTF-8' '
	$TF view --format pprof -o odd.pb.gz odd.folded &&
	$TF show --json odd.pb.gz > odd.json &&
	node -e "JSON.parse(require(\"fs\").readFileSync(\"odd.json\", \"utf8\"))" &&
	iconv -f UTF-8 -t UTF-8 odd.json > /dev/null &&
	$TF show odd.pb.gz > odd.txt &&
	! grep -q "$(printf "\001")" odd.txt
'

test_expect_success 'text: control characters in names are escaped on the terminal' '
	$TF view odd.folded > odd-top.txt &&
	expect_contains odd-top.txt "new\\x01line" &&
	expect_contains odd-top.txt "bad\\xff\\xfeutf8" &&
	! grep -q "$(printf "\001")" odd-top.txt
'

test_expect_success 'a foreign file: no metadata, no tests, still totals' '
	printf "a;b 3\na;c 4\n" > plain.folded &&
	$TF show plain.folded > plain.txt &&
	expect_contains plain.txt "Tests: none" &&
	expect_not_contains plain.txt "Processes" &&
	expect_not_contains plain.txt "lost" &&
	grep -q "^  samples        7$" plain.txt &&
	$TF show --json plain.folded > plain.json &&
	expect_eq "$(json plain.json d.totals.lost)" null &&
	expect_eq "$(json plain.json d.tests.length)" 0
'

test_expect_success 'help' '
	$TF show --help > help && expect_contains help "--json"
'

test_done

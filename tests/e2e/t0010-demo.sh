#!/usr/bin/env bash
# t0010-demo.sh - the README's first command: `make demo` records the
# bundled example from the top of the source tree and shows its profile.
# Whatever the tree holds at its top (a .testflame.yml, say) must not stop
# it.
. "$(dirname "$0")/lib.sh"

# make's own build directory is named relative to the top; another is
# passed on (made again there, the first time)
build=()
[ "$BUILD" -ef "$TOP/build" ] || build=(BUILD="$BUILD")

test_expect_success 'make demo records the example and shows its hot functions' '
	make -s --no-print-directory -C "$TOP" "${build[@]+"${build[@]}"}" demo >out 2>err &&
	test -s "$BUILD/demo/run.pb.gz" &&
	expect_contains out "rle_expand" &&
	expect_contains out "hash_crc32"
'

test_done

#!/usr/bin/env bash
# t9200-check-layers.sh - `make check-layers` (tests/check-layers.sh): the
# tree as it is keeps its floors (SPEC §12, docs/architecture.md), and a
# copy of it with one include planted fails, naming the file and line: an
# include that climbs a floor, a cycle between two folders of one floor,
# another folder's private header, a second private header in a folder, a
# folder on no floor.
. "$(dirname "$0")/lib.sh"

CHECK=$TOP/tests/check-layers.sh

# A copy of the sources to plant includes in.
copy() { # dir
	mkdir "$1" && cp -r "$TOP/src" "$TOP/include" "$1/"
}
# Insert LINE after the first #include of FILE.
plant() { # file line
	awk -v line="$2" '{ print } !done && /^#include/ { print line; done = 1 }' "$1" > "$1.new" &&
	mv "$1.new" "$1"
}

test_expect_success 'the tree keeps its floors' '
	"$CHECK" "$TOP" >out &&
	grep -q "^check-layers: [0-9]* folders on 9 floors, [0-9]* includes between folders; none climbs, no cycle$" out
'

test_expect_code 1 'an include that climbs a floor: the file, the line and both floors' '
	copy climb && plant climb/src/base/file.c "#include \"testflame/report.h\"" &&
	line=$(grep -n "testflame/report.h" climb/src/base/file.c | cut -d: -f1) &&
	"$CHECK" climb >out; rc=$?
	cat out &&
	grep -qx "src/base/file.c:$line: includes \"testflame/report.h\": base (floor 0) climbs to report (floor 5)" out &&
	expect_contains out "1 problem with the floors" && exit $rc
'

test_expect_code 1 'a cycle between two folders of one floor: each include of the cycle named' '
	copy cycle && plant cycle/src/record/event.c "#include \"testflame/profile.h\"" &&
	plant cycle/src/profile/values.c "#include \"testflame/record.h\"" &&
	"$CHECK" cycle >out; rc=$?
	cat out &&
	grep -Eq "^a cycle between folders: (record -> profile -> record|profile -> record -> profile)$" out &&
	grep -Eq "^  record -> profile: src/record/event.c:[0-9]+$" out &&
	grep -Eq "^  profile -> record: src/profile/values.c:[0-9]+$" out && exit $rc
'

test_expect_code 1 'another folder'"'"'s private header, even from above' '
	copy private && plant private/src/run/store.c "#include \"store/store_int.h\"" &&
	"$CHECK" private >out; rc=$?
	cat out &&
	grep -Eq "^src/run/store.c:[0-9]+: includes \"store/store_int.h\", the private header of src/store" out &&
	exit $rc
'

test_expect_code 1 'one private header a folder: src/F/F_int.h' '
	copy second && printf "/* a second one */\n" > second/src/store/refs.h &&
	"$CHECK" second >out; rc=$?
	cat out &&
	expect_contains out "src/store/refs.h: a folder has one private header, src/store/store_int.h" &&
	exit $rc
'

test_expect_code 1 'a new folder must be given its floor' '
	copy newdir && mkdir newdir/src/extra && printf "#include \"testflame/common.h\"\n" > newdir/src/extra/x.c &&
	"$CHECK" newdir >out; rc=$?
	cat out &&
	expect_contains out "src/extra: a folder on no floor" && exit $rc
'

test_done

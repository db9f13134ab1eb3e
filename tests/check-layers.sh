#!/usr/bin/env bash
# check-layers.sh - the source's floors (SPEC §12, docs/architecture.md):
# every #include of src/ and include/testflame/ goes down a floor or stays
# on its own, a folder includes no other folder's private header, and no
# two folders include each other, through any number of others; a
# folder's one private header is src/F/F_int.h. Prints each violation with
# its file and line and exits 1; else one line saying what it checked.
#
#   tests/check-layers.sh [TOP]     (make check-layers; make test runs it)
#
# A folder stands on the floor below; a folder that uses another stands
# above it. The public headers in include/testflame/ belong to the folder
# that implements them: NAME.h to src/NAME, the others by the table below.
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 2

# The floors, lowest first: a folder may include from its own floor and
# those below it.
floors=(
	"base git net python"
	"record profile symbolize"
	"context attribute"
	"compare store"
	"history"
	"report"
	"publish"
	"run doctor"
	"cli"
)
# Public headers whose name is not their folder's.
owners="common:base config:context aggregate:profile hook:publish stats:compare"

dirs=$(for d in src/*/; do basename "$d"; done)
protos=$(for p in src/*/*.proto; do [ -e "$p" ] && echo "$(basename "$p"):$(basename "$(dirname "$p")")"; done)
# (an empty file has no first line to be checked by: none is empty)
files=$(ls src/*/*.c src/*/*.h include/testflame/*.h 2>/dev/null)

awk -v floors="$(printf '%s\n' "${floors[@]}")" -v owners="$owners" -v dirs="$dirs" \
    -v protolist="$protos" '
BEGIN {
	n = split(floors, rows, "\n")
	for (i = 1; i <= n; i++) {
		m = split(rows[i], names, " ")
		for (j = 1; j <= m; j++) floor[names[j]] = i - 1
	}
	m = split(owners, pairs, " ")
	for (j = 1; j <= m; j++) { split(pairs[j], kv, ":"); owner[kv[1]] = kv[2] }
	m = split(dirs, ds, "\n")
	for (j = 1; j <= m; j++) if (ds[j] != "") isdir[ds[j]] = 1
	m = split(protolist, ps, "\n")
	for (j = 1; j <= m; j++) if (ps[j] != "") { split(ps[j], kv, ":"); protos[kv[1]] = kv[2] }
	bad = 0
}
function problem(msg) { print msg; bad++ }
# The folder a file belongs to: src/F/..., or the owner of include/testflame/N.h.
function folder_of(path,    p, base) {
	if (path ~ /^src\//) { split(path, p, "/"); return p[2] }
	base = path; sub(/^.*\//, "", base); sub(/\.h$/, "", base)
	return header_owner(base)
}
function header_owner(name) {
	if (name in owner) return owner[name]
	if (name in isdir) return name
	return ""
}
FNR == 1 {
	from = folder_of(FILENAME)
	if (FILENAME ~ /^src\/.*\.h$/ && FILENAME != "src/" from "/" from "_int.h")
		problem(FILENAME ": a folder has one private header, src/" from "/" from "_int.h")
	if (!(from in floor) && !(from in reported)) {
		reported[from] = 1
		if (from == "")
			problem(FILENAME ": a public header of no folder: name it after its folder, or add it to the owners in tests/check-layers.sh")
		else
			problem("src/" from ": a folder on no floor: add it to the floors in tests/check-layers.sh and docs/architecture.md")
	}
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
	inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
	to = ""
	if (inc ~ /^testflame\//) {
		name = inc; sub(/^testflame\//, "", name); sub(/\.h$/, "", name)
		to = header_owner(name)
		if (to == "") { problem(FILENAME ":" FNR ": includes \"" inc "\", a public header of no folder"); next }
	} else if (inc ~ /\//) {
		split(inc, p, "/")
		to = p[1]
		if (!(to in isdir)) { problem(FILENAME ":" FNR ": includes \"" inc "\", which is no folder of src/"); next }
		if (to != from || FILENAME !~ /^src\//) {
			problem(FILENAME ":" FNR ": includes \"" inc "\", the private header of src/" to " (include its public header, testflame/*.h)")
			next
		}
	} else if (inc ~ /\.pb-c\.h$/) {
		proto = inc; sub(/\.pb-c\.h$/, ".proto", proto)
		to = (proto in protos) ? protos[proto] : ""
		if (to == "") { problem(FILENAME ":" FNR ": includes \"" inc "\", generated from no .proto of src/"); next }
	} else {
		to = from # a header beside the file
	}
	if (to == from || !(from in floor) || !(to in floor)) next
	if (floor[to] > floor[from])
		problem(FILENAME ":" FNR ": includes \"" inc "\": " from " (floor " floor[from] ") climbs to " to " (floor " floor[to] ")")
	if (!((from, to) in edge)) { edge[from, to] = FILENAME ":" FNR; out[from] = out[from] " " to }
}
END {
	# a cycle between folders: with no include climbing, only folders of
	# one floor can include each other; a path back to where it started
	for (f in floor) state[f] = 0
	for (f in floor) if (state[f] == 0) visit(f, "")
	nfolders = 0; for (f in floor) if (f in isdir) nfolders++
	nedges = 0; for (e in edge) nedges++
	if (bad) { print bad " problem" (bad == 1 ? "" : "s") " with the floors (docs/architecture.md)"; exit 1 }
	print "check-layers: " nfolders " folders on " n " floors, " nedges " includes between folders; none climbs, no cycle"
}
function visit(f, path,    k, m, nb, g, i, start, msg) {
	state[f] = 1; path = path " " f
	m = split(out[f], nb, " ")
	for (k = 1; k <= m; k++) {
		g = nb[k]
		if (floor[g] != floor[f])
			continue
		if (state[g] == 1) {
			# the cycle is the path from g to f, then back to g
			start = index(path, " " g " ") ? index(path, " " g " ") : index(path, " " g)
			msg = substr(path, start + 1) " " g
			gsub(/ /, " -> ", msg)
			problem("a cycle between folders: " msg)
			split(substr(path, start + 1) " " g, cyc, " ")
			for (i = 1; cyc[i + 1] != ""; i++)
				print "  " cyc[i] " -> " cyc[i + 1] ": " edge[cyc[i], cyc[i + 1]]
		} else if (state[g] == 0) {
			visit(g, path)
		}
	}
	state[f] = 2
}
' $files

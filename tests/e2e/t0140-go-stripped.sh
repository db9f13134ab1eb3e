#!/usr/bin/env bash
# t0140-go-stripped.sh - Go binaries linked without symbols or DWARF (what
# `go test` and `go run` build) are symbolized from Go's own .gopclntab,
# with file:line, and unwound through its frame-size table.
. "$(dirname "$0")/lib.sh"

if ! need go; then
	test_skip 'stripped Go binaries' 'go is not installed'
	test_done
	exit 0
fi

mkdir -p gp && cat >gp/main.go <<\GO
package main

var sink uint64

//go:noinline
func leafWork(n int) {
	x := sink
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

//go:noinline
func middle(n int) { leafWork(n) }

func main() {
	for i := 0; i < 40; i++ {
		middle(10000000)
	}
}
GO
(cd gp && printf 'module gp\n\ngo 1.19\n' >go.mod &&
 GOCACHE=$GO_CACHE go build -ldflags='-s -w' -o ../stripped . &&
 GOCACHE=$GO_CACHE go build -o ../full .) || exit 1

test_expect_success 'the binary really has no symbol table' '
	! readelf -S stripped | grep -q "\.symtab" && readelf -S stripped | grep -q gopclntab
'

test_expect_success 'functions are named from .gopclntab, with their file:line' '
	"$TF" record -q --freq 999 -o s.pb.gz -- ./stripped &&
	go tool pprof -top s.pb.gz 2>/dev/null >top.txt &&
	expect_near "$(cum_share top.txt main.leafWork)" 100 5 "main.leafWork cum%" &&
	go tool pprof -lines -top s.pb.gz 2>/dev/null >lines.txt &&
	grep -q "main.leafWork .*main.go:9" lines.txt
'

test_expect_success 'the frameless leaf keeps its caller (unwound by Go frame sizes)' '
	go tool pprof -top s.pb.gz 2>/dev/null >top.txt &&
	expect_near "$(cum_share top.txt main.middle)" 100 5 "main.middle cum%" &&
	expect_near "$(cum_share top.txt main.main)" 100 5 "main.main cum%"
'

test_expect_success 'stripped and unstripped builds give the same functions' '
	"$TF" record -q --freq 999 -o f.pb.gz -- ./full &&
	go tool pprof -top f.pb.gz 2>/dev/null >ftop.txt &&
	expect_near "$(cum_share ftop.txt main.middle)" "$(cum_share top.txt main.middle)" 5 "main.middle"
'

test_done

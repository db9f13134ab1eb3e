#!/usr/bin/env node
// make-run-file.js - write a small gzip pprof run file with testflame
// metadata, encoded by a third-party pprof library (pprof-format), for tests
// that need run files without recording one.
//
//   node make-run-file.js OUT.pb.gz [KEY=VALUE ...] [--samples N] [--func NAME]
//
// Every KEY=VALUE becomes the comment "testflame.KEY=VALUE".
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Function: Fn, Line, Location, Profile, Sample, ValueType, StringTable } =
	require('pprof-format');

const args = process.argv.slice(2);
if (args.length < 1) {
	console.error('usage: make-run-file.js OUT [KEY=VALUE ...] [--samples N] [--func NAME]');
	process.exit(2);
}
const out = args.shift();
let samples = 10, func = 'work';
const meta = [];
while (args.length) {
	const a = args.shift();
	if (a === '--samples') samples = Number(args.shift());
	else if (a === '--func') func = args.shift();
	else meta.push(a);
}
const st = new StringTable();
const fmain = new Fn({ id: 1, name: st.dedup('main'), filename: st.dedup('main.c') });
const fwork = new Fn({ id: 2, name: st.dedup(func), filename: st.dedup('work.c') });
const lmain = new Location({ id: 1, line: [new Line({ functionId: 1, line: 3 })] });
const lwork = new Location({ id: 2, line: [new Line({ functionId: 2, line: 7 })] });
const profile = new Profile({
	sampleType: [new ValueType({ type: st.dedup('samples'), unit: st.dedup('count') })],
	sample: [new Sample({ locationId: [2, 1], value: [samples] })],
	location: [lmain, lwork],
	function: [fmain, fwork],
	comment: meta.map((kv) => st.dedup('testflame.' + kv)),
	stringTable: st,
});
fs.writeFileSync(out, zlib.gzipSync(Buffer.from(profile.encode())));

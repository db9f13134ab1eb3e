// pprof-tool.mjs - a real third-party pprof codec (Datadog's pprof-format)
// on both sides of testflame's pprof codec:
//
//   node pprof-tool.mjs decode FILE    decode FILE (gzip or not) and print one
//                                      fact per line: sample types, totals,
//                                      functions, labels, comments
//   node pprof-tool.mjs make-run OUT [--build]
//                                      write a gzip pprof shaped like a
//                                      testflame run file (sample types,
//                                      test/process/pid/tid labels,
//                                      testflame.* comments), known content;
//                                      --build adds 5 samples of a build
//                                      step (test "[build]", program cc1)
import { gunzipSync, gzipSync } from 'node:zlib'
import { readFileSync, writeFileSync } from 'node:fs'
import {
  Function as PFunction, Label, Line, Location, Mapping, Profile, Sample,
  StringTable, ValueType
} from 'pprof-format'

function str (p, i) {
  return p.stringTable.strings[Number(i)]
}

function decode (file) {
  let data = readFileSync(file)
  if (data[0] === 0x1f && data[1] === 0x8b) data = gunzipSync(data)
  const p = Profile.decode(new Uint8Array(data))
  const out = []
  const types = p.sampleType.map(t => `${str(p, t.type)}/${str(p, t.unit)}`)
  out.push(`sample_types ${types.join(' ')}`)
  out.push(`records ${p.sample.length}`)
  p.sampleType.forEach((t, i) => {
    let total = 0n
    for (const s of p.sample) total += BigInt(s.value[i])
    out.push(`total ${str(p, t.type)} ${total}`)
  })
  const fnById = new Map(p.function.map(f => [String(f.id), f]))
  const locById = new Map(p.location.map(l => [String(l.id), l]))
  for (const f of p.function) {
    out.push(`function ${str(p, f.name)} file=${str(p, f.filename)} start=${f.startLine}`)
  }
  // leaf function of every sample, weighted by the first value: the flat column
  const flat = new Map()
  for (const s of p.sample) {
    const loc = locById.get(String(s.locationId[0]))
    if (!loc) throw new Error(`sample names missing location ${s.locationId[0]}`)
    const fn = loc.line.length ? fnById.get(String(loc.line[0].functionId)) : null
    const name = fn ? str(p, fn.name) : '?'
    flat.set(name, (flat.get(name) || 0n) + BigInt(s.value[0]))
    for (const l of s.label) {
      const key = str(p, l.key)
      const val = Number(l.str) ? str(p, l.str) : String(l.num)
      out.push(`label ${key}=${val}`)
    }
  }
  for (const [name, v] of [...flat].sort()) out.push(`flat ${name} ${v}`)
  for (const c of p.comment) out.push(`comment ${str(p, c)}`)
  if (Number(p.defaultSampleType)) out.push(`default_sample_type ${str(p, p.defaultSampleType)}`)
  if (p.periodType) out.push(`period ${str(p, p.periodType.type)}/${str(p, p.periodType.unit)} ${p.period}`)
  for (const m of p.mapping) out.push(`mapping ${str(p, m.filename)} build_id=${str(p, m.buildId)}`)
  console.log([...new Set(out)].join('\n'))
}

// The run file of an imaginary suite of three tests in two programs.
function makeRun (out, withBuild) {
  const st = new StringTable()
  const period = 10101010
  const fn = []
  const addFn = (name, file, line) => {
    const f = new PFunction({
      id: fn.length + 1, name: st.dedup(name), systemName: st.dedup(name),
      filename: st.dedup(file), startLine: line
    })
    fn.push(f)
    return f.id
  }
  const mapping = new Mapping({
    id: 1, memoryStart: 0x400000, memoryLimit: 0x500000, fileOffset: 0,
    filename: st.dedup('/usr/bin/app'), buildId: st.dedup('0123456789abcdef'),
    hasFunctions: true, hasFilenames: true, hasLineNumbers: true
  })
  const fMain = addFn('main', 'main.c', 10)
  const fRun = addFn('run_test', 'runner.c', 20)
  const fA = addFn('hot_a', 'a.c', 5)
  const fB = addFn('hot_b', 'b.c', 7)
  const fW = addFn('weird "name" <tag> & \\ naïve_λ', 'w.c', 9)
  const loc = []
  const addLoc = (f, line) => {
    const l = new Location({
      id: loc.length + 1, mappingId: 1, address: 0x401000 + loc.length * 16,
      line: [new Line({ functionId: f, line })]
    })
    loc.push(l)
    return l.id
  }
  const lMain = addLoc(fMain, 12)
  const lRun = addLoc(fRun, 22)
  const lA = addLoc(fA, 6)
  const lB = addLoc(fB, 8)
  const lW = addLoc(fW, 10)
  const samples = []
  const add = (stack, n, test, proc, pid, tid) => {
    samples.push(new Sample({
      locationId: stack,
      value: [n, n * period],
      label: [
        new Label({ key: st.dedup('test'), str: st.dedup(test) }),
        new Label({ key: st.dedup('process'), str: st.dedup(proc) }),
        new Label({ key: st.dedup('pid'), num: pid }),
        new Label({ key: st.dedup('tid'), num: tid })
      ]
    }))
  }
  add([lA, lRun, lMain], 40, 'test_alpha', 'app', 100, 100)
  add([lA, lRun, lMain], 15, 'test_alpha', 'app', 100, 101)
  add([lRun, lMain], 5, 'test_alpha', 'app', 100, 101)
  add([lB, lRun, lMain], 30, 'test_beta', 'app', 200, 200)
  add([lW, lMain], 4, 'weird "test" <x>', 'helper', 300, 300)
  add([lW, lMain], 3, 'weird "test" <x>', 'helper', 300, 301)
  add([lW, lMain], 3, 'weird "test" <x>', 'helper', 300, 302)
  if (withBuild) add([lMain], 5, '[build]', 'cc1', 400, 400)
  const meta = {
    version: '0.1.0', command: 'make test', suite: 'demo', event: 'cpu-clock',
    freq: '99', period: String(period), sampler: 'perf', rung: 'perf cpu-clock',
    unwinder: 'auto fp=120 dwarf=30', exit_status: '0', samples: '100', lost: '2',
    throttled: '1', unresolved: '3', truncated: '4', processes: '3', threads: '6',
    start: '2024-05-01T12:00:00Z', duration_ns: '1500000000', commit: 'abc123',
    branch: 'main'
  }
  const comments = Object.entries(meta).map(([k, v]) => st.dedup(`testflame.${k}=${v}`))
  comments.push(st.dedup(`testflame.test.test_alpha=samples=60 value=${60 * period} wall_ns=1500000000 source=process exit=0`))
  comments.push(st.dedup(`testflame.test.test_beta=samples=30 value=${30 * period} wall_ns=400000000 source=markers`))
  comments.push(st.dedup(`testflame.test.weird "test" <x>=samples=10 value=${10 * period}`))
  comments.push(st.dedup('testflame.test.test_gamma=samples=0 value=0 wall_ns=2000000 source=process exit=1'))
  if (withBuild) comments.push(st.dedup(`testflame.test.[build]=samples=5 value=${5 * period} wall_ns=90000000 source=build`))
  const cpu = new ValueType({ type: st.dedup('cpu'), unit: st.dedup('nanoseconds') })
  const profile = new Profile({
    sampleType: [new ValueType({ type: st.dedup('samples'), unit: st.dedup('count') }), cpu],
    sample: samples,
    mapping: [mapping],
    location: loc,
    function: fn,
    stringTable: st,
    timeNanos: 1714564800000000000n,
    durationNanos: 1500000000,
    periodType: cpu,
    period,
    comment: comments,
    defaultSampleType: st.dedup('cpu')
  })
  writeFileSync(out, gzipSync(profile.encode()))
}

const [cmd, arg, opt] = process.argv.slice(2)
if (cmd === 'decode' && arg) decode(arg)
else if (cmd === 'make-run' && arg && (!opt || opt === '--build')) makeRun(arg, opt === '--build')
else {
  console.error('usage: pprof-tool.mjs decode FILE | make-run OUT [--build]')
  process.exit(2)
}

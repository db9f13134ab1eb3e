// junit-check.mjs - read a junit.xml with test-results-parser (a JUnit
// reader CI dashboards use) and print what it understood: totals, then one
// line per test case: "case " and a JSON object with its status, name,
// duration (ms) and failure message.
//
//   node junit-check.mjs FILE
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { parse } = require('test-results-parser')

const file = process.argv[2]
if (!file) {
  console.error('usage: junit-check.mjs FILE')
  process.exit(2)
}
const r = parse({ type: 'junit', files: [file] })
const out = [`total ${r.total}`, `passed ${r.passed}`, `failed ${r.failed}`, `skipped ${r.skipped}`,
  `suites ${r.suites.length}`]
for (const s of r.suites) {
  out.push(`suite ${JSON.stringify(s.name)} total=${s.total} failed=${s.failed} duration=${s.duration}`)
  for (const c of s.cases) {
    out.push(`case ${JSON.stringify({ status: c.status, name: c.name, duration: c.duration, failure: c.failure || null })}`)
  }
}
console.log(out.join('\n'))

// speedscope-check.mjs - validate a speedscope JSON file against the file
// format schema that the speedscope npm package ships
// (dist/release/file-format-schema.json), with ajv, then check what a schema
// cannot say: frame indices in range, one weight per sample, positive
// weights, endValue - startValue equal to their sum. Prints one fact per
// line (profiles and their totals, frame names) for the test to assert on.
//
//   node speedscope-check.mjs FILE
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import Ajv from 'ajv'

const require = createRequire(import.meta.url)
const schemaPath = require.resolve('speedscope/dist/release/file-format-schema.json')
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'))

const file = process.argv[2]
if (!file) {
  console.error('usage: speedscope-check.mjs FILE')
  process.exit(2)
}
const doc = JSON.parse(readFileSync(file, 'utf8'))
const ajv = new Ajv({ allErrors: true, strict: false })
const validate = ajv.compile(schema)
if (!validate(doc)) {
  console.error(`${file}: does not match speedscope's schema:`)
  for (const e of validate.errors.slice(0, 20)) console.error(`  ${e.instancePath} ${e.message}`)
  process.exit(1)
}

const nframes = doc.shared.frames.length
const out = [`profiles ${doc.profiles.length}`, `frames ${nframes}`]
for (const p of doc.profiles) {
  if (p.type !== 'sampled') throw new Error(`profile ${p.name}: type ${p.type}`)
  if (p.samples.length !== p.weights.length) {
    throw new Error(`profile ${p.name}: ${p.samples.length} samples, ${p.weights.length} weights`)
  }
  let sum = 0
  for (const w of p.weights) {
    if (!(w > 0)) throw new Error(`profile ${p.name}: weight ${w}`)
    sum += w
  }
  for (const s of p.samples) {
    for (const i of s) {
      if (!Number.isInteger(i) || i < 0 || i >= nframes) {
        throw new Error(`profile ${p.name}: frame index ${i} of ${nframes}`)
      }
    }
  }
  if (p.endValue - p.startValue !== sum) {
    throw new Error(`profile ${p.name}: endValue-startValue ${p.endValue - p.startValue}, weights ${sum}`)
  }
  // self weight of each leaf frame, the flat column of a top table
  const flat = new Map()
  p.samples.forEach((s, i) => {
    const leaf = doc.shared.frames[s[s.length - 1]].name
    flat.set(leaf, (flat.get(leaf) || 0) + p.weights[i])
  })
  out.push(`profile ${p.name} unit=${p.unit} total=${sum} stacks=${p.samples.length}`)
  for (const [name, v] of [...flat].sort()) out.push(`flat ${p.name} ${name} ${v}`)
}
for (const f of doc.shared.frames) {
  out.push(`frame ${f.name}${f.file ? ` file=${f.file}` : ''}${f.line ? ` line=${f.line}` : ''}`)
}
console.log(out.join('\n'))

// md-check.mjs - render report.md the way a code host does (GitHub
// Flavored Markdown: tables, autolinks, raw HTML passed through, by
// micromark with its GFM extension), load the HTML in headless Chromium
// offline, and print what a reader would see: the size of the comment,
// its tables (rows and cells), every code span, every link, the hidden
// marker, and any element or mention that names should never produce
// (script, img, iframe; "@" outside code; links outside the expected
// hosts). Exit 1 when the page ran script, logged an error or requested
// anything.
//
//   node md-check.mjs FILE
import { micromark } from 'micromark'
import { gfm, gfmHtml } from 'micromark-extension-gfm'
import { readFileSync } from 'node:fs'
import { openChromium } from './chromium.mjs'

const file = process.argv[2]
if (!file) {
  console.error('usage: md-check.mjs FILE')
  process.exit(2)
}
const md = readFileSync(file, 'utf8')
const html = micromark(md, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] })
const facts = [`bytes ${Buffer.byteLength(md)}`, `chars ${Array.from(md).length}`]
const marker = /^<!-- testflame:report suite=([^ ]*) -->$/m.exec(md)
facts.push(`marker ${marker ? marker[1] : 'none'}`)
const problems = []
const { page, close } = await openChromium({ problems, allow: /^(data|about):/ })
try {
  await page.setContent(`<!DOCTYPE html><html><body>${html}</body></html>`)
  const seen = await page.evaluate(() => {
    const r = {}
    r.tables = Array.from(document.querySelectorAll('table'), t =>
      Array.from(t.rows, row => Array.from(row.cells, c => c.textContent)))
    r.codes = Array.from(document.querySelectorAll('code'), c => c.textContent)
    r.links = Array.from(document.querySelectorAll('a'), a => [a.textContent, a.getAttribute('href')])
    r.bad = Array.from(document.querySelectorAll('script, img, iframe, object, embed, svg, style, form, input'), e => e.tagName)
    r.details = document.querySelectorAll('details').length
    // text a host would turn into a mention: "@name" outside code and links
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
    r.mentions = []
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement.closest('code, a, pre')) continue
      const m = n.textContent.match(/(^|[^\w])@[A-Za-z0-9]/)
      if (m) r.mentions.push(n.textContent)
    }
    r.text = document.body.textContent
    r.pwned = window.__pwned
    return r
  })
  facts.push(`tables ${seen.tables.length}`)
  seen.tables.forEach((t, i) => {
    const widths = new Set(t.map(r => r.length))
    facts.push(`table ${i} rows=${t.length - 1} cells=${[...widths].join(',')}`)
    for (const r of t.slice(1)) facts.push(`row ${i} ${r.map(c => JSON.stringify(c)).join(' | ')}`)
  })
  for (const c of seen.codes) facts.push(`code ${JSON.stringify(c)}`)
  for (const [t, h] of seen.links) facts.push(`link ${JSON.stringify(t)} ${h}`)
  facts.push(`details ${seen.details}`)
  facts.push(`bad elements ${seen.bad.length ? seen.bad.join(',') : 'none'}`)
  facts.push(`mentions ${seen.mentions.length}`)
  for (const m of seen.mentions) facts.push(`mention ${JSON.stringify(m)}`)
  facts.push(`pwned ${seen.pwned === undefined ? 'no' : seen.pwned}`)
  if (seen.pwned !== undefined) problems.push('script ran')
  for (const line of seen.text.split('\n')) if (line.trim()) facts.push(`text ${line.trim()}`)
} finally {
  await close()
}
console.log(facts.join('\n'))
if (problems.length) {
  for (const p of problems) console.error(`PROBLEM: ${p}`)
  process.exit(1)
}

// report-check.mjs - drive testflame's index.html in real headless Chromium
// (Debian's chromium through playwright-core), offline, the way a person
// would: open the file, read the test table, pick a test, hover a frame,
// zoom, search, open the sandwich view, toggle icicle and the palette,
// and take a screenshot. Prints one fact per line for the shell tests to
// assert on, and fails (exit 1) on any console error, page error, dialog,
// network request or script injected through a name.
//
//   node report-check.mjs FILE [--json report.json] [--test NAME | --row N]
//        [--hover NAME] [--zoom NAME] [--search RE] [--sandwich NAME]
//        [--sandwich-row N] [--icicle] [--colorblind] [--wbase] [--esc]
//        [--screenshot PNG] [--width PX] [--whover NAME]
//
// A test whose waits grew shows its off-CPU diff flame graph and where it
// waited more (#waits-sec): its title, summary, rows and frames are
// printed; --whover NAME hovers a frame of that graph.
//
// --row N picks the Nth test row (1: the first test), --sandwich-row N
// opens the sandwich of the Nth function of the function table: for names
// that cannot be typed on a command line.
//
// With --json, every row of the page's test table is compared with
// report.json (name, verdict, base, head, delta, interval), and the
// function table of the chosen test with report.json's functions.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { openChromium } from './chromium.mjs'

const argv = process.argv.slice(2)
const file = argv.shift()
const opt = {}
while (argv.length) {
  const k = argv.shift().replace(/^--/, '')
  opt[k] = ['icicle', 'colorblind', 'wbase', 'esc'].includes(k) ? true : argv.shift()
  if (opt[k] === undefined) { console.error(`--${k} needs a value`); process.exit(2) }
}
if (!file) {
  console.error('usage: report-check.mjs FILE [options]')
  process.exit(2)
}

// The page's rules for names and numbers, written again from the spec of
// the formats (report.h, tf_compare_format_cost) rather than imported.
function cleanName (s, max = 1000) {
  const cps = Array.from(s).map(ch => {
    const c = ch.codePointAt(0)
    const bad = c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
      (c >= 0x2066 && c <= 0x2069) || c === 0xfeff
    return bad ? '\ufffd' : ch
  })
  if (cps.length <= max) return cps.join('')
  const head = Math.floor((max - 1) / 3)
  const tail = max - 1 - head
  return cps.slice(0, head).join('') + '\u2026' + cps.slice(cps.length - tail).join('')
}
function sig3 (v, suffix) {
  const a = Math.abs(v)
  const s = a >= 99.95 ? v.toFixed(0) : a >= 9.995 ? v.toFixed(1) : v.toFixed(2)
  return suffix ? `${s} ${suffix}` : s
}
function fmtCost (v, unit) {
  if (v === null || !isFinite(v)) return '-'
  if (v === 0) return '0'
  const a = Math.abs(v)
  if (unit === 'nanoseconds') {
    if (a >= 1e9) return sig3(v / 1e9, 's')
    if (a >= 1e6) return sig3(v / 1e6, 'ms')
    if (a >= 1e3) return sig3(v / 1e3, 'us')
    return `${v.toFixed(0)} ns`
  }
  if (a >= 1e9) return sig3(v / 1e9, 'G')
  if (a >= 1e6) return sig3(v / 1e6, 'M')
  if (a >= 1e4) return sig3(v / 1e3, 'k')
  if (a === Math.floor(a)) return v.toFixed(0)
  return sig3(v, '')
}
function fmtPct (p) {
  return p === null || !isFinite(p) ? '-' : `${p >= 0 ? '+' : ''}${p.toFixed(1)}%`
}
function fmtSigned (v, unit) {
  if (v === 0) return '0'
  return (v < 0 ? '-' : '+') + fmtCost(Math.abs(v), unit)
}

const problems = []
const facts = []
const say = s => facts.push(s)
const { page, close } = await openChromium({ problems, width: +(opt.width || 1280) })
try {
  const t0 = Date.now()
  await page.goto('file://' + resolve(file))
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 })
  say(`loaded ${Date.now() - t0} ms`)
  say(`title ${await page.title()}`)
  say(`summary ${await page.textContent('#summary')}`)
  const notes = await page.$$eval('#notes p', ps => ps.map(p => p.textContent))
  for (const n of notes) say(`note ${n}`)

  // the test table against report.json
  const rows = await page.$$eval('#tests tbody tr', trs => trs.map(tr => Array.from(tr.cells, td => td.textContent)))
  say(`rows ${rows.length - 1}`)
  const single = (await page.$$eval('#tests thead th', ths => ths.map(t => t.textContent))).length === 4
  if (opt.json) {
    const rep = JSON.parse(readFileSync(opt.json, 'utf8'))
    const byName = new Map(rep.tests.map(t => [cleanName(t.name), t]))
    let checked = 0
    for (const r of rows.slice(1)) {
      const t = byName.get(r[1].replace(/ \(waiting\)$/, ''))
      if (!t) { problems.push(`page row for a test not in report.json: ${JSON.stringify(r[1]).slice(0, 200)}`); continue }
      // a verdict of its waits: the time it waited, in nanoseconds
      const w = t.decided_by === 'waiting'
      const [b, h, unit] = w ? [t.waits.base_ns, t.waits.head_ns, 'nanoseconds'] : [t.base.cost, t.head.cost, rep.unit]
      // the work outside the tests, shown and not gated: which way it moved
      const ungated = t.outside && !rep.gate_outside && (t.verdict === 'regressed' || t.verdict === 'improved')
      const word = ungated ? (t.verdict === 'regressed' ? 'slower' : 'faster') : t.verdict
      const want = [word, cleanName(t.name) + (w ? ' (waiting)' : ''), b > 0 ? fmtCost(b, unit) : w ? '0' : '-',
        h > 0 ? fmtCost(h, unit) : w ? '0' : '-', fmtPct(t.delta_pct),
        t.ci_pct[0] === null ? '-' : `[${fmtPct(t.ci_pct[0]).replace('%', '')}, ${fmtPct(t.ci_pct[1]).replace('%', '')}]`]
      if (JSON.stringify(want) !== JSON.stringify(r)) problems.push(`row differs from report.json: page ${JSON.stringify(r)} json ${JSON.stringify(want)}`)
      checked++
    }
    if (checked !== rep.tests.length) problems.push(`page lists ${checked} tests, report.json ${rep.tests.length}`)
    say(`rows match report.json: ${checked}`)
  }
  for (const r of rows.slice(0, 12)) say(`row ${r.join(' | ')}`)

  if (opt.row) {
    opt.test = rows[+opt.row][single ? 0 : 1]
  }
  if (opt.test) {
    const idx = rows.findIndex(r => r[single ? 0 : 1] === opt.test || r[1] === `${opt.test} (waiting)`)
    if (idx < 0) throw new Error(`no row for test ${opt.test}`)
    const t1 = Date.now()
    await page.locator('#tests tbody tr').nth(idx).click()
    say(`picked in ${Date.now() - t1} ms`)
  }
  say(`graph ${await page.textContent('#graph-title')}`)
  say(`frames ${await page.getAttribute('#flame', 'data-frames')}`)
  say(`crumbs ${(await page.$$eval('#crumbs button', bs => bs.map(b => b.textContent))).join(' > ')}`)

  if (opt.json && opt.test && !single) {
    const rep = JSON.parse(readFileSync(opt.json, 'utf8'))
    const t = rep.tests.find(x => cleanName(x.name) === opt.test.replace(/ \(waiting\)$/, ''))
    const frows = await page.$$eval('#funcs tbody tr', trs => trs.map(tr => Array.from(tr.cells, td => td.textContent)))
    let checked = 0
    for (const f of t.functions) {
      const r = frows.find(x => x[0] === cleanName(f.name))
      if (!r) { problems.push(`function ${f.name} of report.json not in the page's table`); continue }
      const want = [fmtCost(f.base_self, rep.unit), fmtCost(f.head_self, rep.unit), fmtSigned(f.delta_self, rep.unit),
        fmtCost(f.base_total, rep.unit), fmtCost(f.head_total, rep.unit), fmtSigned(f.delta_total, rep.unit)]
      if (JSON.stringify(want) !== JSON.stringify(r.slice(2))) problems.push(`function ${f.name}: page ${JSON.stringify(r.slice(2))} json ${JSON.stringify(want)}`)
      if (f.line > 0 && !r[1].endsWith(`:${f.line}`)) problems.push(`function ${f.name}: page location ${r[1]}, report.json line ${f.line}`)
      checked++
    }
    say(`functions match report.json: ${checked}`)
  }
  const frows = await page.$$eval('#funcs tbody tr', trs => trs.map(tr => Array.from(tr.cells, td => td.textContent)))
  for (const r of frows.slice(0, 8)) say(`func ${r.join(' | ')}`)
  if (await page.isVisible('#waits-sec')) {
    say(`waits ${await page.textContent('#waits-title')}`)
    say(`waits summary ${await page.textContent('#waits-summary')}`)
    say(`waits frames ${await page.getAttribute('#waits-flame', 'data-frames')}`)
    const wrows = await page.$$eval('#waits tbody tr', trs => trs.map(tr => Array.from(tr.cells, td => td.textContent)))
    for (const r of wrows) say(`wait ${r.join(' | ')}`)
    const wnames = await page.$$eval('#waits-flame .f', fs => fs.map(f => f.textContent).filter(t => t))
    say(`waits drawn ${wnames.join(' / ')}`)
  } else {
    say('waits none')
  }

  const frame = async (box, name) => {
    const loc = page.locator(`${box} .f`).filter({ hasText: name })
    const n = await loc.count()
    for (let i = 0; i < n; i++) if (await loc.nth(i).textContent() === name) return loc.nth(i)
    throw new Error(`no frame ${name} drawn in ${box}`)
  }
  const colour = async name => (await frame('#flame', name)).evaluate(e => getComputedStyle(e).backgroundColor)
  if (opt.hover) {
    await (await frame('#flame', opt.hover)).hover()
    await page.waitForSelector('#tip:not([hidden])')
    say(`tip ${(await page.$$eval('#tip div', ds => ds.map(d => d.textContent))).join(' / ')}`)
    say(`colour ${await colour(opt.hover)}`)
  }
  if (opt.whover) {
    await (await frame('#waits-flame', opt.whover)).hover()
    await page.waitForSelector('#tip:not([hidden])')
    say(`waits tip ${(await page.$$eval('#tip div', ds => ds.map(d => d.textContent))).join(' / ')}`)
  }
  if (opt.zoom) {
    const f = await frame('#flame', opt.zoom)
    const t1 = Date.now()
    await f.click()
    say(`zoomed in ${Date.now() - t1} ms`)
    say(`zoomed crumbs ${(await page.$$eval('#crumbs button', bs => bs.map(b => b.textContent))).join(' > ')}`)
    say(`zoomed frames ${await page.getAttribute('#flame', 'data-frames')}`)
    say(`detail ${(await page.$$eval('#detail div', ds => ds.map(d => d.textContent))).join(' / ')}`)
  }
  if (opt.search) {
    const t1 = Date.now()
    await page.fill('#q', opt.search)
    await page.waitForFunction(() => document.getElementById('qres').textContent.length > 0)
    say(`searched in ${Date.now() - t1} ms (120 ms of it typing delay)`)
    say(`search ${await page.textContent('#qres')}`)
    say(`highlighted ${await page.$$eval('#flame .f.m', fs => fs.length)}`)
  }
  if (opt.icicle) {
    await page.click('#b-icicle')
    const tops = await page.$$eval('#flame .f', fs => fs.map(f => [f.textContent, parseFloat(f.style.top)]))
    say(`icicle top row ${tops.filter(t => t[1] === 0).map(t => t[0]).join(',')}`)
  }
  if (opt['sandwich-row']) {
    opt.sandwich = await page.locator('#funcs tbody tr').nth(+opt['sandwich-row'] - 1).locator('button.link').textContent()
  }
  if (opt.sandwich) {
    const b = page.locator('#funcs button.link').filter({ hasText: opt.sandwich })
    const n = await b.count()
    let clicked = false
    for (let i = 0; i < n && !clicked; i++) {
      if (await b.nth(i).textContent() === opt.sandwich) { await b.nth(i).click(); clicked = true }
    }
    if (!clicked) throw new Error(`no function ${opt.sandwich} in the table`)
    await page.waitForSelector('#sandwich-sec:not([hidden])')
    say(`sandwich ${await page.textContent('#sandwich-title')}`)
    for (const box of ['#callers', '#callees']) {
      const fs = await page.$$eval(`${box} .f`, fs => fs.map(f => [f.textContent, parseFloat(f.style.top), parseFloat(f.style.width)]))
      fs.sort((a, b) => a[1] - b[1] || b[2] - a[2])
      say(`${box.slice(1)} ${fs.map(f => f[0]).join(' / ')}`)
    }
    await (await frame('#callers', opt.sandwich)).hover()
    say(`sandwich tip ${(await page.$$eval('#tip div', ds => ds.map(d => d.textContent))).join(' / ')}`)
  }
  if (opt.colorblind) {
    await page.check('#cb')
    say(`colorblind frames ${await page.getAttribute('#flame', 'data-frames')}`)
    if (opt.hover) say(`colorblind colour ${await colour(opt.hover)}`)
  }
  if (opt.wbase) {
    await page.click('#b-wbase')
    const names = await page.$$eval('#flame .f', fs => fs.map(f => f.textContent).filter(t => t))
    say(`width from base: ${names.sort().join(',')}`)
  }
  if (opt.esc) {
    await page.keyboard.press('Escape')
    say(`after escape crumbs ${(await page.$$eval('#crumbs button', bs => bs.map(b => b.textContent))).join(' > ')}`)
  }
  if (opt.screenshot) await page.screenshot({ path: opt.screenshot, fullPage: true })

  const pwned = await page.evaluate(() => [window.__pwned, document.querySelectorAll('script').length,
    document.querySelectorAll('img, iframe, object, embed, svg').length])
  say(`pwned ${pwned[0] === undefined ? 'no' : pwned[0]}`)
  say(`script elements ${pwned[1]}`)
  say(`foreign elements ${pwned[2]}`)
  if (pwned[0] !== undefined) problems.push(`a script from a name ran: window.__pwned = ${pwned[0]}`)
} catch (e) {
  problems.push(`check failed: ${e.message}`)
} finally {
  await close()
}
console.log(facts.join('\n'))
if (problems.length) {
  for (const p of problems) console.error(`PROBLEM: ${p}`)
  process.exit(1)
}

// history-check.mjs - drive testflame's history.html in real headless
// Chromium (Debian's chromium through playwright-core), offline: read the
// tables of changes and drifts, each test's plot (its points, steps and
// drift spans), follow a point's link to its commit, take a screenshot.
// Prints one fact per line for the shell tests; fails (exit 1) on any
// console error, page error, dialog, network request or element a name
// could have injected.
//
//   node history-check.mjs FILE [--click TEST] [--screenshot PNG]
import { resolve } from 'node:path'
import { openChromium } from './chromium.mjs'

const argv = process.argv.slice(2)
const file = argv.shift()
const opt = {}
while (argv.length) {
  const k = argv.shift().replace(/^--/, '')
  opt[k] = argv.shift()
}
const problems = []
const facts = []
const { page, close } = await openChromium({ problems, width: 900 })
await page.goto('file://' + resolve(file))
facts.push('title ' + await page.title())
facts.push('summary ' + (await page.textContent('.summary')).trim())
for (const row of await page.$$('tr.change'))
  facts.push('change ' + (await row.$$eval('td', tds => tds.map(t => t.textContent.trim()).join(' | '))))
for (const row of await page.$$('tr.drift-row'))
  facts.push('drift ' + (await row.$$eval('td', tds => tds.map(t => t.textContent.trim()).join(' | '))))
const plots = await page.$$eval('h2.test', hs => hs.map(h => {
  const svg = h.nextElementSibling
  return {
    name: h.textContent,
    points: svg.querySelectorAll('circle.pt').length,
    links: [...svg.querySelectorAll('a')].filter(a => a.getAttribute('href')).length,
    steps: svg.querySelectorAll('line.step').length,
    drifts: svg.querySelectorAll('rect.drift').length
  }
}))
for (const p of plots) facts.push(`plot ${p.name} | points ${p.points} | links ${p.links} | steps ${p.steps} | drifts ${p.drifts}`)
facts.push('commits ' + (await page.$$('#commits tr[id]')).length)
// nothing a name could inject: no script, no element outside the page's own
const injected = await page.$$eval('script, iframe, img, object, embed', e => e.length)
if (injected) problems.push(`${injected} injected elements`)
if (opt.click) {
  // the newest point of that test's plot: its link, followed
  const idx = plots.findIndex(p => p.name === opt.click)
  if (idx < 0) problems.push(`no plot of ${opt.click}`)
  else {
    const link = page.locator('svg.plot').nth(idx).locator('a').last()
    const href = await link.getAttribute('href')
    await link.click()
    const hash = await page.evaluate(() => location.hash)
    facts.push(`clicked ${href} -> ${hash}`)
    facts.push('target ' + (await page.$eval(`[id="${hash.slice(1)}"]`, tr => tr.textContent.trim())))
  }
}
if (opt.screenshot) await page.screenshot({ path: opt.screenshot, fullPage: true })
await close()
console.log(facts.join('\n'))
if (problems.length) {
  for (const p of problems) console.error(`PROBLEM: ${p}`)
  process.exit(1)
}

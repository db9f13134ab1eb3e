// chromium.mjs - Debian's chromium under playwright-core, the way the
// tests drive it: headless, no sandbox, no GPU, no background traffic, an
// empty profile directory, offline; every console error or warning, page
// error, dialog and request to anything but `allow` is pushed to
// `problems` (dialogs are dismissed).
//
//   const { page, close } = await openChromium({ problems, width: 1280 })
import { chromium } from 'playwright-core'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export async function openChromium ({ problems, width = 1280, allow = /^(file|data|about):/ }) {
  const userDir = mkdtempSync(join(tmpdir(), 'tf-chromium-'))
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run']
  })
  await ctx.setOffline(true)
  const page = ctx.pages()[0] || await ctx.newPage()
  page.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`) })
  page.on('pageerror', e => problems.push(`page error: ${e.message}`))
  page.on('dialog', d => { problems.push(`dialog: ${d.message()}`); d.dismiss() })
  page.on('request', r => { if (!allow.test(r.url())) problems.push(`network request: ${r.url()}`) })
  const close = async () => {
    await ctx.close()
    rmSync(userDir, { recursive: true, force: true })
  }
  return { page, close }
}

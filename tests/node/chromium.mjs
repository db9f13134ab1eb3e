// chromium.mjs - Debian's chromium under playwright-core, the way the
// tests drive it: headless, no sandbox, no GPU, no background traffic, an
// empty profile, offline; every console error or warning, page error,
// dialog and request to anything but `allow` is pushed to `problems`
// (dialogs are dismissed).
//
//   const { page, close } = await openChromium({ problems, width: 1280 })
//
// With TF_CHROMIUM_WS set (tests/run.sh starts one browser for the suite,
// chromium-server.mjs), the page opens in a new context of that browser,
// as empty as a new profile, instead of a browser of its own: a launch
// costs 2-3 s, a context a tenth of that. Where that browser is gone, a
// browser of its own all the same.
import { chromium } from 'playwright-core'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const chromiumOptions = {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run']
}

async function shared (ws, viewport) {
  const browser = await chromium.connect(ws)
  const ctx = await browser.newContext({ viewport })
  return { ctx, close: async () => { await ctx.close(); await browser.close() } }
}

async function own (viewport) {
  const userDir = mkdtempSync(join(tmpdir(), 'tf-chromium-'))
  const ctx = await chromium.launchPersistentContext(userDir, { ...chromiumOptions, viewport })
  return {
    ctx,
    close: async () => {
      await ctx.close()
      rmSync(userDir, { recursive: true, force: true })
    }
  }
}

export async function openChromium ({ problems, width = 1280, allow = /^(file|data|about):/ }) {
  const viewport = { width, height: 900 }
  const ws = process.env.TF_CHROMIUM_WS
  const { ctx, close } = ws ? await shared(ws, viewport).catch(() => own(viewport)) : await own(viewport)
  await ctx.setOffline(true)
  const page = ctx.pages()[0] || await ctx.newPage()
  page.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`) })
  page.on('pageerror', e => problems.push(`page error: ${e.message}`))
  page.on('dialog', d => { problems.push(`dialog: ${d.message()}`); d.dismiss() })
  page.on('request', r => { if (!allow.test(r.url())) problems.push(`network request: ${r.url()}`) })
  return { page, close }
}

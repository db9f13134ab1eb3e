// chromium-server.mjs - one headless Chromium (chromium.mjs's options) for
// a whole run of the tests: writes its WebSocket endpoint to FILE once it
// listens, and closes the browser on SIGTERM or SIGINT. tests/run.sh hands
// the endpoint to the tests as TF_CHROMIUM_WS.
//
//   node chromium-server.mjs FILE
import { chromium } from 'playwright-core'
import { renameSync, writeFileSync } from 'node:fs'
import { chromiumOptions } from './chromium.mjs'

const file = process.argv[2]
if (!file) {
  console.error('usage: chromium-server.mjs FILE')
  process.exit(2)
}
const server = await chromium.launchServer(chromiumOptions)
writeFileSync(file + '.tmp', server.wsEndpoint() + '\n')
renameSync(file + '.tmp', file)
const stop = async () => { await server.close(); process.exit(0) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)

// A stand-in part for the supervisor tests: listens, logs one JSON line, announces itself, stops on SIGTERM (once).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createLogger } from '../../server/shared/logger.ts'
import { announceReady } from '../../server/supervisor.ts'

const name = process.argv[2]
const server = createServer((_req, res) => res.end(JSON.stringify({ name, pid: process.pid, peer: process.env.PEER_URL ?? null })))
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  process.stdout.write(JSON.stringify({ level: 30, part: name, msg: 'listening', url }) + '\n')
  announceReady({ url })
})
let stopping = false
process.on('SIGTERM', () => {
  if (stopping) return
  stopping = true
  // A part says a good deal as it stops (FAKE_STOP_LINES lines, through the parts' own logger), and its last word is 'stopped'.
  const logger = createLogger('info', 'json').child({ part: name })
  for (let n = 0; n < Number(process.env.FAKE_STOP_LINES ?? 0); n++) logger.info({ n, pad: 'x'.repeat(200) }, 'closing')
  server.close(() => {
    logger.info('stopped')
    process.exit(0)
  })
})

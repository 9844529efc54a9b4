// A stand-in part for the supervisor tests: listens, logs one JSON line, announces itself, stops on SIGTERM.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { announceReady } from '../../server/supervisor.ts'

const name = process.argv[2]
const server = createServer((_req, res) => res.end(JSON.stringify({ name, pid: process.pid, peer: process.env.PEER_URL ?? null })))
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  process.stdout.write(JSON.stringify({ level: 30, part: name, msg: 'listening', url }) + '\n')
  announceReady({ url })
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))

import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

// Where the kernel hands out ports to outgoing connections and `listen(0)`.
// A port found free there can be taken by any test's fetch before the process
// it was meant for binds it (CI saw EADDRINUSE that way), so ports chosen
// ahead are drawn from below that range, where only explicit binds land.
const EPHEMERAL_LOW = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768
  } catch {
    return 32768
  }
})()
const LOWEST = 10_000

/** Binds `port` (0: any) on loopback and lets it go; the port it got, or undefined if it was taken. */
const tryPort = (port: number) =>
  new Promise<number | undefined>((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(undefined))
    server.listen(port, '127.0.0.1', () => {
      const got = (server.address() as { port: number }).port
      server.close(() => resolve(got))
    })
  })

/** A loopback port that is free now, for a process started later that must be told its port in advance. */
export async function freePort(): Promise<number> {
  // A machine whose ephemeral range starts low leaves no quiet range: take what the kernel gives.
  if (EPHEMERAL_LOW - LOWEST < 1000) return (await tryPort(0))!
  for (;;) {
    const port = await tryPort(LOWEST + Math.floor(Math.random() * (EPHEMERAL_LOW - LOWEST)))
    if (port) return port
  }
}

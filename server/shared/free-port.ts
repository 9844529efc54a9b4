import { createServer, type Server } from 'node:net'
import type { AddressInfo } from 'node:net'

const TRIES = 50

/**
 * A port the system would give now on `host` that is none of `avoid`: the
 * ports a stack is configured on, which a process starting before the parts
 * must not take (the simulated network binds dozens of ports before the
 * app surface binds PORT). Avoided ports stay held while the search goes on,
 * so the system offers another; the port is free when this returns, not
 * reserved: a caller that loses it in between asks again.
 */
export async function freePortAvoiding(host: string, avoid: ReadonlySet<number>): Promise<number> {
  const held: Server[] = []
  try {
    for (let i = 0; i < TRIES; i++) {
      const probe = createServer()
      await new Promise<void>((resolve, reject) => {
        probe.once('error', reject)
        probe.listen({ port: 0, host, exclusive: true }, () => resolve())
      })
      held.push(probe)
      const { port } = probe.address() as AddressInfo
      if (!avoid.has(port)) return port
    }
    throw new Error(`no free port on ${host} outside the ${avoid.size} configured ones after ${TRIES} tries`)
  } finally {
    await Promise.all(held.map((probe) => new Promise<void>((resolve) => probe.close(() => resolve()))))
  }
}

/** True for the error a listen gets when another socket holds the port. */
export const isAddressInUse = (err: unknown): boolean => (err as { code?: string } | undefined)?.code === 'EADDRINUSE'

import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FaultPlan } from '../simnet/faults.ts'
import { UploadStalledError } from './pdp-provider-store.ts'

/**
 * Upload bodies as a simulated Curio reads them: an upload that sends
 * nothing for a while fails, seeded faults break or pause some part-way,
 * and the `stall` fault holds every upload until it is lifted.
 */

export interface UploadBodyOptions {
  /** Seeded faults: some uploads stall or break part-way (site `transfer`). */
  faults?: FaultPlan
  /** An upload that sends nothing for this long fails (Curio's TimeoutLimitReader: 5 s). */
  idleTimeoutMs: number
  /** True while the provider reads no uploads (the `stall` fault). */
  stalled(): boolean
}

export interface UploadBodies {
  /** The request body with Curio's idle timeout, the seeded transfer faults and the `stall` fault. */
  read(req: IncomingMessage, res: ServerResponse, label: string): AsyncGenerator<Uint8Array>
  /** Uploads held by the `stall` fault right now. */
  held(): number
  /** Lets the held uploads look at the fault again: it was lifted, or the provider closes. */
  wakeAll(): void
}

export function createUploadBodies(o: UploadBodyOptions): UploadBodies {
  const stallWaiters = new Set<() => void>()

  async function* read(req: IncomingMessage, res: ServerResponse, label: string): AsyncGenerator<Uint8Array> {
    const drawn = o.faults?.draw('transfer', label) ?? null
    const iterator = req[Symbol.asyncIterator]()
    let passed = 0
    while (true) {
      if (o.stalled()) {
        await new Promise<void>((resolve) => {
          const wake = () => {
            stallWaiters.delete(wake)
            res.off('close', wake)
            resolve()
          }
          stallWaiters.add(wake)
          // The response closes before it is sent only when the client has gone.
          res.once('close', wake)
        })
        if (res.destroyed) throw new UploadStalledError('client went away')
        continue
      }
      let timer: NodeJS.Timeout | undefined
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new UploadStalledError(`upload timeout: no progress (duration: ${o.idleTimeoutMs / 1000} Seconds)`)),
          o.idleTimeoutMs,
        )
      })
      let next: IteratorResult<Buffer>
      try {
        next = (await Promise.race([iterator.next(), idle])) as IteratorResult<Buffer>
      } finally {
        clearTimeout(timer)
      }
      if (next.done) return
      const chunk = new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.length)
      if (drawn && passed === 0) {
        // A seeded fault strikes after the first chunk: the connection breaks, or the provider pauses.
        if (drawn.kind === 'fail') {
          req.destroy()
          throw new UploadStalledError('connection reset (simulated fault)')
        }
        yield chunk
        passed += chunk.length
        await new Promise((r) => setTimeout(r, drawn.ms))
        continue
      }
      passed += chunk.length
      yield chunk
    }
  }

  return {
    read,
    held: () => stallWaiters.size,
    wakeAll() {
      for (const wake of [...stallWaiters]) wake()
    },
  }
}

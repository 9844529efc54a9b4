import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { createPieceLimit } from '../../../server/gateway/deals/market/piece-limit.ts'
import type { StorageAsk } from '../../../server/gateway/deals/market/provider-port.ts'

const MiB = 1024 * 1024

/** A gateway's group size as the content store keeps it, the policy's providers and their asks. */
function setup(asks: Record<string, number | null>, groupSize = 64 * MiB) {
  let size = groupSize
  const clock = { now: 0 }
  const asked: string[] = []
  const limit = createPieceLimit({
    service: { policyProviders: async () => Object.keys(asks) },
    providers: {
      async ask(provider): Promise<StorageAsk | null> {
        asked.push(provider)
        const max = asks[provider]
        if (max === null) throw new Error('unreachable')
        return { price: 0n, verifiedPrice: 0n, minPieceSize: 256, maxPieceSize: max }
      },
    },
    content: {
      groupSize: () => size,
      limitGroupSize: async (pieceSize) => void (size = Math.min(size, pieceSize)),
    },
    logger: pino({ level: 'silent' }),
    now: () => clock.now,
    withTimeout: (run) => run(AbortSignal.timeout(1000)),
  })
  return { limit, size: () => size, clock, asks, asked }
}

describe("groups sized to the policy's providers", () => {
  it('lowers the group size to the smallest piece a named provider takes, as a power of two', async () => {
    const t = setup({ t01000: 8 * MiB, t01001: 32 * 1024 * MiB, t01002: 12 * MiB })
    await t.limit.check()
    expect(t.size()).toBe(8 * MiB)
    const u = setup({ t01002: 12 * MiB })
    await u.limit.check()
    expect(u.size()).toBe(8 * MiB)
  })

  it('leaves out a provider that does not answer, and never raises the size', async () => {
    const t = setup({ t01000: null, t01001: 16 * MiB })
    await t.limit.check()
    expect(t.size()).toBe(16 * MiB)
    // Ten minutes on, the silent one answers with a smaller limit, and a bigger one changes nothing.
    t.asks.t01000 = 8 * MiB
    await t.limit.check()
    expect(t.size()).toBe(16 * MiB)
    t.clock.now += 10 * 60_000
    await t.limit.check()
    expect(t.size()).toBe(8 * MiB)
    t.asks.t01000 = 1024 * MiB
    t.asks.t01001 = 1024 * MiB
    t.clock.now += 10 * 60_000
    await t.limit.check()
    expect(t.size()).toBe(8 * MiB)
  })

  it('keeps GROUP_SIZE when every provider takes more', async () => {
    const t = setup({ t01000: 32 * 1024 * MiB }, 64 * MiB)
    await t.limit.check()
    expect(t.size()).toBe(64 * MiB)
    expect(t.asked).toEqual(['t01000'])
  })
})

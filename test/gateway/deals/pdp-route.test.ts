import { afterEach, describe, expect, it } from 'vitest'
import { startDealStack, type DealStack } from './harness.ts'

/**
 * The PDP route of the deal engine, end to end: the gateway's groups go
 * through the unchanged Synapse SDK to the simulated Onchain Cloud's
 * Curio-like providers and chain on loopback, beside deal-market deals on
 * the simulated network. Its chain runs on the wall clock (0.025 s epochs:
 * a proving period in 6 s), the deal market on the test's clock.
 */
/** Every URL this process fetched while `run` ran. */
async function recordingFetches<T>(run: () => Promise<T>): Promise<{ result: T; urls: URL[] }> {
  const original = globalThis.fetch
  const urls: URL[] = []
  globalThis.fetch = (input, init) => {
    urls.push(new URL(input instanceof Request ? input.url : String(input)))
    return original(input, init)
  }
  try {
    return { result: await run(), urls }
  } finally {
    globalThis.fetch = original
  }
}

describe('the deal engine\'s PDP route (Filecoin Onchain Cloud through the Synapse SDK)', () => {
  let stack: DealStack | undefined
  afterEach(async () => {
    await stack?.close()
    stack = undefined
  })

  const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 17 + (i >> 8)) & 0xff)
  const groupOf = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.details.groups[0]
  const pdpCopies = (group: any) => (group.deals ?? []).filter((d: any) => d.route === 'pdp')

  it('stores a group as two proved PDP copies and deal-market copies, then offloads it and reads it back from a PDP provider', async () => {
    stack = await startDealStack({ seed: 'pdp route', copies: 1, foc: { copies: 2 } })
    const s = stack
    const data = bytes(300_000, 1)
    expect((await s.put('/a.bin', data)).status).toBe(201)
    await s.seal()

    // First the upload and the adds on chain: the reason says where it stands.
    const reasons = new Set<string>()
    const provedInTime = await s.runUntil(async () => {
      const g = await groupOf(s, '/a.bin')
      if (g.reason) reasons.add(g.reason)
      return pdpCopies(g).filter((d: any) => d.state === 'active').length === 2
    }, { max: 600, pauseMs: 100, epochsPerTick: 10 })
    expect(provedInTime).toBe(true)
    const proved = pdpCopies(await groupOf(s, '/a.bin'))
    expect(proved).toHaveLength(2)
    for (const copy of proved) {
      expect(copy.provider).toMatch(/^pdp:\d+$/)
      expect(copy.dataSetId).toBe(copy.dealId)
      expect(copy.pieceId).toBeGreaterThanOrEqual(0)
      expect(copy.lastProofEpoch).toBeGreaterThan(0)
    }
    expect(new Set(proved.map((c: any) => c.provider)).size).toBe(2)
    expect([...reasons].some((r) => /first proof due in about \d+ (second|minute)s?/.test(r))).toBe(true)

    // Both routes' copies retrievable: offloaded, and the bytes come back from a provider.
    expect(await s.runUntil(async () => (await groupOf(s, '/a.bin')).state === 'offloaded', { max: 400, pauseMs: 20 })).toBe(true)
    const offloaded = await groupOf(s, '/a.bin')
    expect(offloaded.state).toBe('offloaded')
    expect(pdpCopies(offloaded).every((d: any) => d.isRetrievable)).toBe(true)
    expect(offloaded.deals.filter((d: any) => d.route === undefined && d.state === 'active')).toHaveLength(1)
    // Read from a PDP provider's trustless gateway, warm copies first.
    const { result: back, urls } = await recordingFetches(async () => {
      const res = await s.get('/a.bin')
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()) }
    })
    expect(back.status).toBe(200)
    expect(back.body.equals(Buffer.from(data))).toBe(true)
    const pdpHosts = new Set(s.foc!.providers.map((p) => new URL(p.url).host))
    expect(urls.some((u) => pdpHosts.has(u.host) && u.pathname.startsWith('/ipfs/'))).toBe(true)
  }, 240_000)
})

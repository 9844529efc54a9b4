import { afterEach, describe, expect, it } from 'vitest'
import { carCapacity, createFilling } from '../../../../server/gateway/content/group-filling.ts'
import type { Repository } from '../../../../server/gateway/content/types.ts'
import { offerFor } from '../../../../server/gateway/deals/market/offer.ts'
import type { StorageAsk, StorageProviderPort } from '../../../../server/gateway/deals/market/provider-port.ts'
import { loadConfig } from '../../../../server/shared/config.ts'
import { PDP_MAX_UPLOAD_BYTES } from '../../../../server/shared/piece.ts'
import { pdpHarness, type PdpHarness } from './harness.ts'

/**
 * Item 4 of issue 36 at its real size, without writing a GiB: on mainnet's
 * defaults (PDP copies on) the content store's fullest group is one Synapse
 * SDK upload, which the PDP route sends whole and gets proved on its two
 * providers, and the deal market's providers take the same piece within
 * mainnet's DEAL_MAX_PADDING. The whole way through both routes to
 * `offloaded` is test/gateway/deals/pdp-route.test.ts, with the upload limit
 * made small.
 */
describe("a full group on mainnet's defaults fits both routes", () => {
  let h: PdpHarness | undefined
  afterEach(() => h?.close())

  const mainnet = loadConfig({ NETWORK: 'mainnet', FOC_RPC_URL: 'https://api.node.glif.io/rpc/v1' }).gateway
  const MiB = 2 ** 20

  /** The content store's filling rule on mainnet's settings: 1 MiB blocks (IPIP-499 chunks) until the next would not fit. */
  async function fullestGroup(): Promise<{ carBytes: number; blocks: number }> {
    const repo = { createGroup: async () => 1 } as unknown as Repository
    const filling = createFilling({ repo, groupSize: mainnet.groupSize, maxCarBytes: mainnet.pdp?.maxUploadBytes ?? PDP_MAX_UPLOAD_BYTES })
    let blocks = 0
    while (!filling.overflows(MiB)) {
      await filling.reserve(MiB)
      blocks++
    }
    // A CAR section is the block, its CID (36 bytes) and a length varint (3 bytes at 1 MiB); the header's root (41) and framing (32).
    return { carBytes: 32 + 41 + blocks * (MiB + 36 + 3), blocks }
  }

  it('is one PDP upload, sent whole and proved on both providers, and a piece the deal market takes', async () => {
    expect(mainnet.groupSize).toBe(2 ** 30)
    expect(mainnet.pdp?.copies).toBe(2)
    const { carBytes, blocks } = await fullestGroup()
    // Full: within one upload, and not far below it (it closes on its size, not early).
    expect(carBytes).toBeLessThanOrEqual(PDP_MAX_UPLOAD_BYTES)
    expect(carBytes).toBeGreaterThan(PDP_MAX_UPLOAD_BYTES - 2 * MiB)
    expect(blocks).toBe(1015)
    expect(carBytes).toBeLessThanOrEqual(carCapacity(mainnet.groupSize))

    // The PDP route: the whole CAR in one upload, a copy on each of two providers, counted once proved.
    h = await pdpHarness({ uploadIdleMs: 60_000 })
    h.foc.maxProvingPeriod = 2880
    h.foc.challengeWindow = 60
    h.group(carBytes, mainnet.groupSize)
    await h.pass()
    // The fake takes the whole GiB from the file before it answers (a second or so; longer on a loaded machine).
    for (let i = 0; i < 1_200 && h.route.transferPending(1, []); i++) await new Promise((r) => setTimeout(r, 50))
    expect(h.foc.uploads.map((u) => u.size)).toEqual([carBytes])
    expect(h.route.progress(1, await h.rows(1)).steps.join('; ')).not.toMatch(/larger than one Onchain Cloud upload/)
    h.advance(2_830)
    h.foc.prove(1)
    h.foc.prove(2)
    await h.pass()
    expect((await h.rows(1)).map((d) => [d.provider, d.state])).toEqual([
      ['pdp:1', 'active'],
      ['pdp:2', 'active'],
    ])

    // The deal market, with mainnet's terms: a provider taking pieces from 256 MiB gets it as it is; one from 16 GiB,
    // padded 16 times, as DEAL_MAX_PADDING (16 on mainnet) allows; one from 32 GiB does not.
    const terms = {
      durationEpochs: 518_400,
      pricePerGiBEpoch: '0',
      verified: false,
      maxPaddingFactor: mainnet.deals!.maxPaddingFactor!,
      startOffsetEpochs: 0,
    }
    expect(terms.maxPaddingFactor).toBe(16)
    const asks: Record<string, StorageAsk> = {
      f01: { price: 0n, verifiedPrice: 0n, minPieceSize: 256 * MiB, maxPieceSize: 32 * 2 ** 30 },
      f02: { price: 0n, verifiedPrice: 0n, minPieceSize: 16 * 2 ** 30, maxPieceSize: 32 * 2 ** 30 },
      f03: { price: 0n, verifiedPrice: 0n, minPieceSize: 32 * 2 ** 30, maxPieceSize: 64 * 2 ** 30 },
    }
    const providers = { ask: async (p: string) => asks[p], servesHttpRetrieval: async () => true } as unknown as StorageProviderPort
    const c = { withTimeout: <T>(f: (signal: AbortSignal) => Promise<T>) => f(new AbortController().signal) }
    const group = h.groups[0]
    expect(await offerFor(c, { providers, terms }, group, 'f01', false)).toMatchObject({ pieceSize: 2 ** 30, transferSize: carBytes })
    expect(await offerFor(c, { providers, terms }, group, 'f02', false)).toMatchObject({ pieceSize: 16 * 2 ** 30 })
    expect(await offerFor(c, { providers, terms }, group, 'f03', false)).toMatchObject({
      refused: expect.stringMatching(/over DEAL_MAX_PADDING 16/),
    })
  }, 60_000)
})

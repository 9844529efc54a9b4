import { describe, expect, it } from 'vitest'
import type { GroupRecord } from '../../server/gateway/content/index.ts'
import type { DealProgress, GroupDeal } from '../../server/gateway/deals/index.ts'
import type { DealKind } from '../../server/gateway/deals/market/types.ts'
import { marketProgress } from '../../server/gateway/deals/market/progress.ts'
import { pdpProgress, type PdpFacts } from '../../server/gateway/deals/pdp/progress.ts'
import type { RepairPhase } from '../../server/gateway/deals/repair.ts'
import { GROUP_REASON_CODES } from '../../server/shared/contracts/file-info.ts'
import { groupReason, type ReasonContext } from '../../server/gateway/group-reason.ts'

const group = (state: GroupRecord['state'], size = 4 * 1024 * 1024): GroupRecord => ({
  id: 7,
  state,
  size,
  retrievableCopies: 0,
  deals: [],
  createdMs: 0,
  updatedMs: 0,
})
const deal = (state: GroupDeal['state'], extra: Partial<GroupDeal> = {}): GroupDeal => ({
  id: 1,
  groupId: 7,
  route: 'market',
  provider: 'f01000',
  pieceCid: 'baga',
  state,
  startEpoch: 10_000,
  endEpoch: 2_000_000,
  retrievable: false,
  createdMs: 0,
  updatedMs: 0,
  ...extra,
})
/** What the tests say of a group's copies: the deal market's facts, and the PDP route's when it is there. */
interface Given {
  head?: number
  copies?: number
  deals?: GroupDeal[]
  epochSeconds?: number
  dealKind?: DealKind
  noProviders?: string
  serviceError?: string
  fundsError?: string
  pdp?: Partial<PdpFacts>
  /** Where the group's repair stands (a group reloaded for new copies). */
  repair?: RepairPhase
}
/** The group's progress as the engine gives it: each route's own words, the deal market first. */
const progress = (p: Given): DealProgress => {
  const deals = p.deals ?? []
  const epochSeconds = p.epochSeconds ?? 30
  const market = marketProgress(
    deals.filter((d) => d.route === 'market'),
    {
      copies: p.copies ?? 3,
      head: 'head' in p ? p.head : 10_000 - 5760,
      epochSeconds,
      noProviders: p.noProviders,
      serviceError: p.serviceError,
      fundsError: p.fundsError,
      kind: p.dealKind ?? { verified: true, networkVersion: 28 },
    },
  )
  const pdp =
    p.pdp &&
    pdpProgress(
      deals.filter((d) => d.route === 'pdp'),
      { copies: 2, epochSeconds, ...p.pdp },
    )
  return { deals, routes: pdp ? [market, pdp] : [market], ...(p.repair ? { repair: p.repair } : {}) }
}
/** The sentence, as /file-info's `reason`; `codeOf` gives its `reasonCode`. */
const said = (g: GroupRecord, c: ReasonContext) => groupReason(g, c)?.text
const codeOf = (g: GroupRecord, c: ReasonContext) => groupReason(g, c)?.code
const ctx = (p?: Given) => ({
  groupSize: 64 * 1024 * 1024,
  groupIdleSeconds: 20,
  listingWaitSeconds: 86_400,
  progress: p && (() => progress(p)),
})

describe('why a group is not further along', () => {
  it('says how full an open group is and when it closes', () => {
    expect(said(group('writable'), ctx())).toBe(
      'waiting for more data: 4.0 MiB of 64 MiB; the group closes when full or after 20 s without new data',
    )
    // Folders' listings alone are not sealed when idle: they wait for the next upload.
    expect(said({ ...group('writable', 900), listingsOnly: true }, ctx())).toBe(
      "waiting for a file's data: 900 bytes of 64 MiB, folder listings only, which go with the next upload; the group closes 20 s after a file's data joins it, when full, or 86400 s after it opened",
    )
  })

  it('names sealing and reloading', () => {
    expect(said(group('full'), ctx())).toMatch(/^sealing: writing the CAR/)
    expect(said(group('VRCARDone'), ctx())).toMatch(/^sealing: checking/)
    expect(said(group('reload'), ctx())).toMatch(/reloading/)
  })

  it('says when sealing waits for disk space rather than calling it sealing', () => {
    expect(said(group('full'), { ...ctx(), freeBytes: 1024 * 1024 })).toBe(
      'waiting for disk space: sealing needs about 4.0 MiB for the CAR file and 1.0 MiB are free',
    )
    expect(said(group('full'), { ...ctx(), freeBytes: 5 * 1024 * 1024 })).toMatch(/^sealing: writing the CAR/)
    // An open group on a full disk cannot take more data nor be sealed: it asks for space, not for data.
    expect(codeOf(group('writable'), { ...ctx(), freeBytes: 0 })).toBe('WAITING_FOR_DISK_SPACE')
    expect(said(group('writable'), { ...ctx(), freeBytes: 5 * 1024 * 1024 })).toMatch(/^waiting for more data/)
  })

  it('says nothing once offloaded', () => {
    expect(said(group('offloaded'), ctx({}))).toBeUndefined()
  })

  it('says plainly when this gateway makes no deals at all', () => {
    expect(said(group('ready_for_deals'), ctx())).toMatch(/no deal service/)
  })

  it('counts providers fetching, copies stored and deals waiting to be sealed, with when the deal starts', () => {
    const p = {
      deals: [deal('proposed'), deal('proposing'), deal('published', { startEpoch: 10_000 }), deal('active', { retrievable: true })],
    }
    expect(said(group('ready_for_deals'), ctx(p))).toBe(
      "1 of 3 copies stored; 2 providers are fetching the data; waiting for the provider to seal: at the latest by the deal's start, in about 2 days",
    )
  })

  it('says when a deal starts in wall-clock time on a sped-up simulated network (1 minute ≈ 5 hours)', () => {
    const p = { epochSeconds: 0.1, deals: [deal('published', { startEpoch: 10_000 })] }
    expect(said(group('ready_for_deals'), ctx(p))).toBe(
      "waiting for the provider to seal: at the latest by the deal's start, in about 10 minutes",
    )
  })

  it('says why no provider takes the piece, with the earlier failures, and that it keeps asking', () => {
    const p = {
      noProviders: 'NO_PROVIDERS_AVAILABLE',
      deals: [
        deal('failed', { failure: { code: 'PROVIDER_DECLINED', detail: 'PRICE_TOO_LOW' } }),
        deal('failed', { failure: { code: 'PROVIDER_DECLINED', detail: 'PRICE_TOO_LOW' } }),
      ],
    }
    expect(said(group('ready_for_deals'), ctx(p))).toBe(
      'no provider takes this piece right now: NO_PROVIDERS_AVAILABLE (2 earlier deals failed: PRICE_TOO_LOW); asking again on every pass',
    )
  })

  describe('PDP copies (Filecoin Onchain Cloud)', () => {
    const pdpDeal = (state: GroupDeal['state'], extra: Partial<GroupDeal> = {}) =>
      deal(state, { route: 'pdp', provider: 'pdp:1', ...extra })
    const pdp = (p: Partial<PdpFacts> = {}) => ({ copies: 2, ...p })

    it('says how much of the upload the providers have taken', () => {
      const p = { pdp: pdp({ upload: { copies: 2, bytes: 400, total: 1000, adding: 0 } }) }
      expect(said(group('ready_for_deals'), ctx(p))).toBe('uploading to 2 providers (40 % sent)')
      expect(codeOf(group('ready_for_deals'), ctx(p))).toBe('DEALS_UNDER_WAY')
    })

    it('says the piece is being added on chain, then that the offload waits for the first proofs and when the last is due', () => {
      const adding = { deals: [pdpDeal('proposed')], pdp: pdp({ upload: { copies: 2, bytes: 1000, total: 1000, adding: 2 } }) }
      expect(said(group('ready_for_deals'), ctx(adding))).toBe('waiting for the piece to be added on chain')
      // The offload waits for both: the later one, 1 800 epochs on a network sped up to 0.1 s an epoch: 3 minutes.
      const committed = {
        epochSeconds: 0.1,
        deals: [pdpDeal('published', { id: 4, firstProofDueEpoch: 1_060 }), pdpDeal('published', { id: 5, firstProofDueEpoch: 2_800 })],
        pdp: pdp({ head: 1_000 }),
      }
      expect(said(group('ready_for_deals'), ctx(committed))).toBe(
        '2 PDP copies committed on chain; the offload waits for their first proof, due in about 3 minutes',
      )
      // Mainnet's schedule on a real chain (30 s epochs): a proof a day, the first in the period after the add.
      const mainnet = { deals: [pdpDeal('published', { id: 4, firstProofDueEpoch: 3_760 })], pdp: pdp({ head: 1_000 }) }
      expect(said(group('ready_for_deals'), ctx(mainnet))).toBe(
        '1 PDP copy committed on chain; the offload waits for its first proof, due in about 23 hours',
      )
      // Before the chain was read, no time is made up.
      const unread = { deals: [pdpDeal('published', { id: 4 })], pdp: pdp() }
      expect(said(group('ready_for_deals'), ctx(unread))).toBe('1 PDP copy committed on chain; the offload waits for its first proof')
    })

    it("names what holds the PDP copies back, with its own code, even while the deal market's copies are stored", () => {
      const stored = [1, 2, 3].map((id) => deal('active', { id, retrievable: true }))
      // No funds: a person must deposit, whatever the other route did (issue 39: this read "3 of 3 copies stored", DEALS_UNDER_WAY).
      const funds = {
        deals: [...stored, pdpDeal('active')],
        pdp: pdp({ fundsError: 'no funds: deposit USDFC: storing needs 0.36 USDFC more' }),
      }
      expect(codeOf(group('ready_for_deals'), ctx(funds))).toBe('WAITING_FOR_FUNDS')
      expect(said(group('ready_for_deals'), ctx(funds))).toBe(
        'no funds: deposit USDFC: storing needs 0.36 USDFC more; meanwhile: 3 of 3 copies stored; 1 of 2 PDP copies proved',
      )
      // Its turn to upload: other groups' uploads take every slot.
      const slotTaken = 'waiting for its turn to upload to PDP providers: 2 other groups are uploading, 2 at a time'
      const turn = { deals: stored, pdp: pdp({ slotTaken }) }
      expect(codeOf(group('ready_for_deals'), ctx(turn))).toBe('WAITING_FOR_UPLOAD_SLOT')
      expect(said(group('ready_for_deals'), ctx(turn))).toBe(`${slotTaken}; meanwhile: 3 of 3 copies stored`)
      // Its last upload failed: when it is tried again, rather than "on every pass".
      const failed = [pdpDeal('failed', { id: 9, failure: { code: 'PROVIDER_REFUSED', detail: 'full' } })]
      const backOff = { deals: [...stored, ...failed], pdp: pdp({ refused: 'pdp:1: full', nextTry: 'in about 4 minutes' }) }
      expect(codeOf(group('ready_for_deals'), ctx(backOff))).toBe('NO_PROVIDER')
      expect(said(group('ready_for_deals'), ctx(backOff))).toBe(
        'no provider takes this piece right now: PDP provider refused: pdp:1: full (1 earlier deal failed: PROVIDER_REFUSED: full); asking again in about 4 minutes; meanwhile: 3 of 3 copies stored',
      )
      // An upload under way is not held back: its steps are the reason.
      const uploading = { deals: stored, pdp: pdp({ slotTaken, upload: { copies: 2, bytes: 1, total: 2, adding: 0 } }) }
      expect(codeOf(group('ready_for_deals'), ctx(uploading))).toBe('DEALS_UNDER_WAY')
    })

    it("names the Onchain Cloud's own refusal (a contract's revert) before its funds, and a chain that does not answer (issue 44)", () => {
      const refused = {
        code: 'CONTRACT_REFUSED' as const,
        words: "the Onchain Cloud refused the gateway: the warm storage service's view (0x5373) refused getPriceList(): no reason given",
      }
      const both = { pdp: pdp({ chainProblem: refused, fundsError: 'no funds: deposit USDFC: storing needs 0.36 USDFC more' }) }
      expect(codeOf(group('ready_for_deals'), ctx(both))).toBe('CONTRACT_REFUSED')
      expect(said(group('ready_for_deals'), ctx(both))).toBe(refused.words)
      const silent = { code: 'CHAIN_UNREACHABLE' as const, words: "waiting for the Onchain Cloud's chain: connect ECONNREFUSED" }
      expect(codeOf(group('ready_for_deals'), ctx({ pdp: pdp({ chainProblem: silent }) }))).toBe('CHAIN_UNREACHABLE')
    })

    it('says "no funds: deposit USDFC" as it is, when nothing is under way', () => {
      const p = { pdp: pdp({ fundsError: 'no funds: deposit USDFC: the wallet 0xabc holds 0 USDFC; 0.36 USDFC is to be deposited' }) }
      expect(said(group('ready_for_deals'), ctx(p))).toBe(
        'no funds: deposit USDFC: the wallet 0xabc holds 0 USDFC; 0.36 USDFC is to be deposited',
      )
      expect(codeOf(group('ready_for_deals'), ctx(p))).toBe('WAITING_FOR_FUNDS')
    })

    it('says a proved copy missed its proof and when it stops counting, needing attention, even once offloaded', () => {
      const missing = pdpDeal('active', { id: 4, provider: 'pdp:2', retrievable: true, missedProofEpoch: 1_480, stopsCountingEpoch: 1_960 })
      const p = { deals: [pdpDeal('active', { id: 5, retrievable: true }), missing], pdp: pdp({ head: 1_486 }) }
      const words =
        'the PDP copy on pdp:2 missed its proof; it stops counting in about 4 hours unless its provider proves again (another copy is made then)'
      expect(codeOf(group('offloaded'), ctx(p))).toBe('PROOF_MISSED')
      expect(said(group('offloaded'), ctx(p))).toBe(words)
      // Told first while other copies are on their way, what they do after it.
      const moving = { ...p, deals: [...p.deals, deal('proposed', { id: 9 })] }
      expect(codeOf(group('ready_for_deals'), ctx(moving))).toBe('PROOF_MISSED')
      expect(said(group('ready_for_deals'), ctx(moving))).toBe(
        `${words}; meanwhile: 1 provider is fetching the data; 2 of 2 PDP copies proved`,
      )
      // Before the chain's head is read: the epoch it stops counting after.
      expect(said(group('offloaded'), ctx({ deals: [missing], pdp: pdp() }))).toMatch(/it stops counting after epoch 1960 unless/)
    })

    it('names the provider that refused or stalled', () => {
      const p = {
        deals: [pdpDeal('failed', { failure: { code: 'UPLOAD_STALLED', detail: 'no progress in 600 s' } })],
        pdp: pdp({ refused: 'pdp:1 UPLOAD_STALLED: no progress in 600 s' }),
      }
      expect(said(group('ready_for_deals'), ctx(p))).toBe(
        'no provider takes this piece right now: PDP provider refused: pdp:1 UPLOAD_STALLED: no progress in 600 s (1 earlier deal failed: UPLOAD_STALLED: no progress in 600 s); asking again on every pass',
      )
    })
  })

  describe('a group reloaded for repair, at each phase', () => {
    const proved = deal('active', { id: 1, route: 'pdp', provider: 'pdp:1', retrievable: true })
    const lost = deal('ended', { id: 2, route: 'pdp', provider: 'pdp:2', failure: { code: 'RETRIEVAL_FAILED' } })
    const stored = deal('active', { id: 3, retrievable: true })
    const held = { phase: 'held' } as const
    const reason = (p: Given) => groupReason(group('reload'), ctx(p))

    it('says its data is being reloaded from a provider, for new copies', () => {
      expect(reason({ deals: [proved, lost], pdp: {}, repair: { phase: 'reloading' } })).toEqual({
        code: 'RELOADING',
        text: 'reloading the data from a storage provider to make new copies',
      })
      // A group in reload the engine does not repair (before a restart's sweep): reloading.
      expect(reason({ deals: [proved, lost], pdp: {} })?.code).toBe('RELOADING')
    })

    it('names the funds its new PDP copy waits for, not the reload it is past', () => {
      const fundsError = 'no funds: deposit USDFC: storing needs 0.12 USDFC more in Filecoin Pay before anything is uploaded'
      expect(reason({ deals: [proved, lost], pdp: { fundsError }, repair: held })).toEqual({
        code: 'WAITING_FOR_FUNDS',
        text: `reloaded to make new copies: ${fundsError}; meanwhile: 1 of 2 PDP copies proved`,
      })
    })

    it("names the deal market's funds, or the provider it lacks, though a copy is stored", () => {
      expect(reason({ deals: [stored], fundsError: 'no DataCap', repair: held })).toEqual({
        code: 'WAITING_FOR_FUNDS',
        text: 'reloaded to make new copies: waiting for funds: no DataCap; meanwhile: 1 of 3 copies stored',
      })
      expect(reason({ deals: [stored], noProviders: 'NO_PROVIDERS_AVAILABLE', repair: held })).toEqual({
        code: 'NO_PROVIDER',
        text: 'reloaded to make new copies: no provider takes this piece right now: NO_PROVIDERS_AVAILABLE; asking again on every pass; meanwhile: 1 of 3 copies stored',
      })
    })

    it('names its turn to upload, and the PDP provider that refused it', () => {
      const slotTaken = 'waiting for its turn to upload to PDP providers: 2 other groups are uploading, 2 at a time'
      expect(reason({ deals: [proved, lost], pdp: { slotTaken }, repair: held })).toEqual({
        code: 'WAITING_FOR_UPLOAD_SLOT',
        text: `reloaded to make new copies: ${slotTaken}; meanwhile: 1 of 2 PDP copies proved`,
      })
      const refused = { refused: 'pdp:3: full', nextTry: 'in about 4 minutes' }
      expect(reason({ deals: [proved, lost], pdp: refused, repair: held })).toMatchObject({
        code: 'NO_PROVIDER',
        text: 'reloaded to make new copies: no provider takes this piece right now: PDP provider refused: pdp:3: full; asking again in about 4 minutes; meanwhile: 1 of 2 PDP copies proved',
      })
    })

    it('says how the upload of its new copy goes, then that the copy waits for its first proof', () => {
      const uploading = { deals: [proved, lost], pdp: { upload: { copies: 1, bytes: 400, total: 1000, adding: 0 } }, repair: held }
      expect(reason(uploading)).toEqual({
        code: 'DEALS_UNDER_WAY',
        text: 'reloaded to make new copies: 1 of 2 PDP copies proved; uploading to 1 provider (40 % sent)',
      })
      const committed = deal('published', { id: 4, route: 'pdp', provider: 'pdp:3', firstProofDueEpoch: 1_240 })
      expect(reason({ deals: [proved, lost, committed], pdp: { head: 1_000 }, repair: held })).toEqual({
        code: 'DEALS_UNDER_WAY',
        text: 'reloaded to make new copies: 1 of 2 PDP copies proved; 1 PDP copy committed on chain; the offload waits for its first proof, due in about 2 hours',
      })
    })

    it('says its reloaded data is being removed again: its copies back, or not in time', () => {
      expect(reason({ deals: [proved], pdp: {}, repair: { phase: 'releasing', why: 'repaired' } })).toEqual({
        code: 'RELEASING',
        text: 'its new copies are made: removing the data reloaded for them from this gateway',
      })
      expect(reason({ deals: [proved, lost], pdp: {}, repair: { phase: 'releasing', why: 'given-up' } })).toEqual({
        code: 'RELEASING',
        text: 'its new copies were not made in time: removing the reloaded data from this gateway; it is reloaded again later',
      })
    })
  })

  it('says when the deal service cannot be reached', () => {
    expect(said(group('ready_for_deals'), ctx({ serviceError: 'ECONNREFUSED' }))).toMatch(/deal service, which cannot be reached/)
  })

  it('says that deals go unverified once the network has ended Fil+ (FIP-0118, network version 29)', () => {
    const note = 'Fil+ ended at network version 29 (FIP-0118): deals are unverified, no DataCap is needed'
    const p = { deals: [deal('proposed')], dealKind: { verified: false, networkVersion: 29, note } }
    expect(said(group('ready_for_deals'), ctx(p))).toBe(`1 provider is fetching the data (${note})`)
  })

  it('says when a deal starts without an epoch number, even before the engine has read the head', () => {
    const p = { head: undefined, deals: [deal('published', { startEpoch: 10_000 })] }
    expect(said(group('ready_for_deals'), ctx(p))).toBe("waiting for the provider to seal: at the latest by the deal's start")
    expect(said(group('ready_for_deals'), ctx(p))).not.toMatch(/\d{3,}/)
  })

  it('gives every reason a code from the closed list, the one a UI counts', () => {
    expect(codeOf(group('writable'), ctx())).toBe('WAITING_FOR_DATA')
    expect(codeOf(group('full'), { ...ctx(), freeBytes: 1024 })).toBe('WAITING_FOR_DISK_SPACE')
    expect(codeOf(group('full'), ctx())).toBe('SEALING')
    expect(codeOf(group('VRCARDone'), ctx())).toBe('CHECKING_CAR')
    expect(codeOf(group('reload'), ctx())).toBe('RELOADING')
    expect(codeOf(group('ready_for_deals'), ctx())).toBe('NO_DEAL_SERVICE')
    expect(codeOf(group('ready_for_deals'), ctx({ deals: [deal('proposed')] }))).toBe('DEALS_UNDER_WAY')
    expect(codeOf(group('ready_for_deals'), ctx({ fundsError: 'no DataCap' }))).toBe('WAITING_FOR_FUNDS')
    expect(codeOf(group('ready_for_deals'), ctx({ serviceError: 'ECONNREFUSED' }))).toBe('DEAL_SERVICE_UNREACHABLE')
    expect(codeOf(group('ready_for_deals'), ctx({ noProviders: 'BUSY' }))).toBe('NO_PROVIDER')
    expect(codeOf(group('ready_for_deals'), ctx({}))).toBe('LOOKING_FOR_PROVIDERS')
    expect(codeOf(group('offloaded'), ctx({}))).toBeUndefined()
    expect([...GROUP_REASON_CODES].sort()).toEqual([
      'CHAIN_UNREACHABLE',
      'CHECKING_CAR',
      'CONTRACT_REFUSED',
      'DEALS_UNDER_WAY',
      'DEAL_SERVICE_UNREACHABLE',
      'LOOKING_FOR_PROVIDERS',
      'NO_DEAL_SERVICE',
      'NO_PROVIDER',
      'PROOF_MISSED',
      'RELEASING',
      'RELOADING',
      'SEALING',
      'WAITING_FOR_DATA',
      'WAITING_FOR_DISK_SPACE',
      'WAITING_FOR_FUNDS',
      'WAITING_FOR_UPLOAD_SLOT',
    ])
  })
})

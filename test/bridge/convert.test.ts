import { describe, expect, it } from 'vitest'
import { networkClock } from '../../server/shared/epochs.ts'
import { expirationOf, fileStateLabel, groupStateLabel, toMetadataFile } from '../../server/bridge/convert.ts'
import { GatewayFileSchema, type GatewayFile, type GatewayGroup } from '../../server/bridge/gateway-record.ts'
import { MetadataFileSchema } from '../../server/shared/contracts/metadata-record.ts'
import { expectToMatch } from '../helpers/contracts.ts'

const mainnet = networkClock('mainnet')
const deal = (endEpoch: number, isRetrievable = true, dealId = 1) => ({
  provider: 'f01234',
  state: 'active',
  dealId,
  endEpoch,
  isRetrievable,
})
const group = (state: string, deals?: ReturnType<typeof deal>[], extra: Partial<GatewayGroup> = {}): GatewayGroup => ({
  state,
  pieceCid: 'baga6ea4seaqexample',
  retrievableCopies: (deals ?? []).filter((d) => d.isRetrievable).length,
  ...(deals ? { deals } : {}),
  ...extra,
})
const record = (details: GatewayFile['details']): GatewayFile => ({ cid: 'bafkreiexample', path: '/alice/docs', file: 'a.txt', details })

describe('fileStateLabel', () => {
  it.each([
    ['staging', 'Staging'],
    ['offloading', 'Offloading'],
    ['partially_offloaded', 'Partially offloaded'],
    ['offloaded', 'Offloaded'],
    // The older CIDgravity spelling.
    ['partially offloaded', 'Partially offloaded'],
    ['Offloaded', 'Offloaded'],
    ['archived', 'Unknown'],
    ['', 'Unknown'],
    [undefined, 'Unknown'],
    [null, 'Unknown'],
  ])('%s → %s', (state, label) => {
    expect(fileStateLabel(state)).toBe(label)
  })
})

describe('groupStateLabel', () => {
  it.each([
    ['ready_for_deals', 'ready for deals'],
    ['ready for deals', 'ready for deals'],
    ['writable', 'writable'],
    ['full', 'full'],
    ['VRCARDone', 'VRCARDone'],
    ['offloaded', 'offloaded'],
    ['reload', 'reload'],
  ])('%s → %s', (state, label) => {
    expect(groupStateLabel(state)).toBe(label)
  })
})

describe('expirationOf', () => {
  it('is the latest retrievable deal of a single group', () => {
    expect(expirationOf([group('offloaded', [deal(100), deal(300), deal(200)])], mainnet)?.epoch).toBe(300)
  })

  it('ignores deals that are not retrievable', () => {
    expect(expirationOf([group('offloaded', [deal(100), deal(900, false)])], mainnet)?.epoch).toBe(100)
  })

  it('is the shortest-lived group over several groups', () => {
    const groups = [
      group('offloaded', [deal(500), deal(800)]), // lasts until 800
      group('offloaded', [deal(600), deal(700, true), deal(2000, false)]), // lasts until 700
      group('offloaded', [deal(1000)]), // lasts until 1000
    ]
    expect(expirationOf(groups, mainnet)?.epoch).toBe(700)
  })

  it('is absent when any group has no retrievable copy', () => {
    expect(expirationOf([group('offloaded', [deal(500)]), group('ready_for_deals', [deal(900, false)])], mainnet)?.epoch).toBeUndefined()
    expect(expirationOf([group('offloaded', [deal(500)]), group('writable')], mainnet)?.epoch).toBeUndefined()
  })

  it('is absent without groups', () => {
    expect(expirationOf([], mainnet)?.epoch).toBeUndefined()
  })

  it("is a folder's files' end: a group of only its own listing, not yet stored, does not hide it", () => {
    const files = group('offloaded', [deal(800)], { fileCount: 3 })
    const listing = group('writable', undefined, { fileCount: 0 })
    expect(expirationOf([files, listing], mainnet)?.epoch).toBe(800)
    expect(expirationOf([files, group('writable', undefined, { fileCount: 1 }), listing], mainnet)?.epoch).toBeUndefined()
    // A folder holding no file yet lasts as its listing does.
    expect(expirationOf([listing], mainnet)?.epoch).toBeUndefined()
    expect(expirationOf([group('offloaded', [deal(900)], { fileCount: 0 })], mainnet)?.epoch).toBe(900)
  })
})

describe('toMetadataFile', () => {
  it('shows the user path and name, not the gateway tree', () => {
    const file = toMetadataFile(record({ state: 'staging', retrievableCopies: 0, groups: [] }), '/docs/a.txt', mainnet)
    expect(file.cid).toBe('bafkreiexample')
    expect(file.path).toBe('/docs')
    expect(file.file).toBe('a.txt')
  })

  it("passes a folder's per-state file counts through under the display labels, and the groups' reasons", () => {
    const file = toMetadataFile(
      record({
        state: 'staging',
        retrievableCopies: 0,
        groups: [
          {
            groupId: 7,
            state: 'writable',
            retrievableCopies: 0,
            reason: 'waiting for more data',
            reasonCode: 'WAITING_FOR_DATA',
            fileCount: 4,
          },
          // A code without its words is not passed on: the words are what the tab shows.
          { groupId: 8, state: 'full', retrievableCopies: 0, reasonCode: 'SEALING' },
        ],
        fileCounts: { offloaded: 5, staging: 1 },
      }),
      '/Photos',
      mainnet,
    )
    expect(file.details.fileCounts).toEqual({ Offloaded: 5, Staging: 1 })
    expect(file.details.groups[0]).toMatchObject({
      groupId: 7,
      reason: 'waiting for more data',
      reasonCode: 'WAITING_FOR_DATA',
      fileCount: 4,
    })
    expect(file.details.groups[1]).not.toHaveProperty('reasonCode')
  })

  it('passes the deals providers failed through, whether replaced or not, beside the live deals', () => {
    const failedDeals = [
      { provider: 'f01000', dealId: 41, reason: 'SEALING_FAILED', replaced: true },
      { provider: 'f03000', reason: 'NOT_SEALED_IN_TIME', replaced: false },
    ]
    const parsed = GatewayFileSchema.parse(
      record({ state: 'offloading', retrievableCopies: 1, groups: [group('ready_for_deals', [deal(9000)], { failedDeals })] }),
    )
    const file = toMetadataFile(parsed, '/a.txt', mainnet)
    expect(file.details.groups[0].failedDeals).toEqual(failedDeals)
    expect(file.details.groups[0].deals).toHaveLength(1)
    expectToMatch(MetadataFileSchema, file)
    // Another gateway's odd list is dropped, not the record.
    const odd = GatewayFileSchema.parse(
      record({ state: 'offloading', groups: [{ state: 'ready_for_deals', failedDeals: [{ provider: 'f01000' }] } as never] }),
    )
    expect(toMetadataFile(odd, '/a.txt', mainnet).details.groups[0]).not.toHaveProperty('failedDeals')
  })

  it("passes a PDP copy's milestone through, and from a gateway that does not date it, its times as the network's clock tells them", () => {
    const pdp = { provider: 'pdp:3', dealId: 12, endEpoch: 5_000_000, route: 'pdp', dataSetId: 12 }
    const copies = [
      { ...pdp, state: 'proposed', isRetrievable: false, milestone: 'uploading' },
      // Mainnet: added at epoch 4 000 000, first challenged in the next proving period, a day later.
      { ...pdp, state: 'published', isRetrievable: false, pieceId: 4, milestone: 'committed', firstProofDueEpoch: 4_002_820 },
      { ...pdp, state: 'active', isRetrievable: true, pieceId: 0, milestone: 'proved', lastProofEpoch: 3_999_000 },
    ]
    const parsed = GatewayFileSchema.parse(
      record({ state: 'offloading', retrievableCopies: 1, groups: [group('ready_for_deals', copies as never)] }),
    )
    const file = toMetadataFile(parsed, '/a.txt', mainnet)
    const [uploading, committed, proved] = file.details.groups[0].deals!
    expect(uploading).toMatchObject({ milestone: 'uploading' })
    expect(uploading).not.toHaveProperty('firstProofDueTimestamp')
    expect(committed).toMatchObject({
      state: 'published',
      milestone: 'committed',
      firstProofDueEpoch: 4_002_820,
      // mainnet genesis 1598306400 + 4 002 820 × 30 s
      firstProofDueTimestamp: 1598306400 + 4_002_820 * 30,
    })
    expect(proved).toMatchObject({ milestone: 'proved', lastProofTimestamp: 1598306400 + 3_999_000 * 30 })
    expect(proved).not.toHaveProperty('firstProofDueEpoch')
    expectToMatch(MetadataFileSchema, file)
    // Another gateway's odd milestone or due epoch is dropped, not the record; a due time on a copy not committed is not passed on.
    const odd = GatewayFileSchema.parse(
      record({
        state: 'offloading',
        groups: [
          group('ready_for_deals', [
            { ...pdp, state: 'published', isRetrievable: false, milestone: 'sealed', firstProofDueEpoch: -5 },
            { ...pdp, state: 'active', isRetrievable: true, milestone: 'proved', firstProofDueEpoch: 7 },
          ] as never),
        ],
      }),
    )
    const [oddCommitted, oddProved] = toMetadataFile(odd, '/a.txt', mainnet).details.groups[0].deals!
    expect(oddCommitted).toEqual({
      provider: 'pdp:3',
      state: 'published',
      dealId: 12,
      endEpoch: 5_000_000,
      isRetrievable: false,
      route: 'pdp',
      endTimestamp: 1598306400 + 5_000_000 * 30,
      dataSetId: 12,
    })
    expect(oddProved).toMatchObject({ milestone: 'proved' })
    expect(oddProved).not.toHaveProperty('firstProofDueEpoch')
  })

  it("passes a proved PDP copy's missed proof through with its dates as the network's clock tells them, and needs both epochs", () => {
    const pdp = { provider: 'pdp:3', dealId: 12, endEpoch: 5_000_000, route: 'pdp', dataSetId: 12, pieceId: 0, milestone: 'proved' }
    const copies = [
      // Mainnet: its proof was due by 4 000 000, two more proving periods (a day each) to prove again.
      { ...pdp, state: 'active', isRetrievable: true, missedProofEpoch: 4_000_000, stopsCountingEpoch: 4_005_760 },
      { ...pdp, state: 'active', isRetrievable: true, missedProofEpoch: 4_000_000, stopsCountingEpoch: 'soon' },
    ]
    const parsed = GatewayFileSchema.parse(record({ state: 'offloaded', groups: [group('offloaded', copies as never)] }))
    const file = toMetadataFile(parsed, '/a.txt', mainnet)
    const [missed, odd] = file.details.groups[0].deals!
    expect(missed).toMatchObject({
      missedProofEpoch: 4_000_000,
      missedProofTimestamp: 1598306400 + 4_000_000 * 30,
      stopsCountingEpoch: 4_005_760,
      stopsCountingTimestamp: 1598306400 + 4_005_760 * 30,
    })
    expectToMatch(MetadataFileSchema, file)
    // Another gateway's odd end is dropped, and the miss with it: no half of it is shown.
    expect(odd).not.toHaveProperty('missedProofEpoch')
    expect(odd).not.toHaveProperty('stopsCountingTimestamp')
  })

  it("passes our gateway's dates of PDP copies through (their chain's clock, not the network's), and ends the file at the earliest end in time", () => {
    // The Onchain Cloud's FEVM chain runs on its own clock: its epoch 900 000 is not mainnet's epoch 900 000.
    const fevm = { genesis: 1_700_000_000, epochSeconds: 30 }
    const at = (epoch: number) => fevm.genesis + epoch * fevm.epochSeconds
    const pdp = { provider: 'pdp:3', dealId: 12, route: 'pdp', dataSetId: 12, pieceId: 0 }
    const proved = {
      ...pdp,
      state: 'active',
      isRetrievable: true,
      milestone: 'proved',
      endEpoch: 900_000,
      endTimestamp: at(900_000),
      lastProofEpoch: 880_000,
      lastProofTimestamp: at(880_000),
    }
    const committed = {
      ...pdp,
      provider: 'pdp:4',
      state: 'published',
      isRetrievable: false,
      milestone: 'committed',
      endEpoch: 900_000,
      endTimestamp: at(900_000),
      firstProofDueEpoch: 880_240,
      firstProofDueTimestamp: at(880_240),
    }
    // A market deal at a larger epoch of mainnet's chain that ends earlier in time: 2024-06-13 against the PDP copy's 2024-09-22.
    const market = deal(4_000_000, true, 11)
    expect(1598306400 + 4_000_000 * 30).toBeLessThan(at(900_000))
    const parsed = GatewayFileSchema.parse(
      record({
        state: 'offloaded',
        retrievableCopies: 1,
        groups: [group('offloaded', [proved, committed] as never), group('offloaded', [market])],
      }),
    )
    const file = toMetadataFile(parsed, '/a.txt', mainnet)
    const [p, c] = file.details.groups[0].deals!
    expect(p).toMatchObject({ endTimestamp: at(900_000), lastProofEpoch: 880_000, lastProofTimestamp: at(880_000) })
    expect(c).toMatchObject({ endTimestamp: at(900_000), firstProofDueEpoch: 880_240, firstProofDueTimestamp: at(880_240) })
    // The market deal's fields stay as CIDgravity's gateway has them: no date of ours on it.
    expect(file.details.groups[1].deals![0]).not.toHaveProperty('endTimestamp')
    // Compared in time, not by epochs of two chains: the market deal ends the file, dated on the network's clock.
    expect(file.details).toMatchObject({ expirationEpoch: 4_000_000, expirationTimestamp: 1598306400 + 4_000_000 * 30 })
    // A PDP copy that ends first in time ends the file at its own chain's date (2024-05-07), never its epoch on mainnet's clock.
    const sooner = { ...proved, endEpoch: 500_000, endTimestamp: at(500_000) }
    const both = toMetadataFile(
      GatewayFileSchema.parse(
        record({ state: 'offloaded', groups: [group('offloaded', [sooner] as never), group('offloaded', [market])] }),
      ),
      '/a.txt',
      mainnet,
    )
    expect(both.details).toMatchObject({ expirationEpoch: 500_000, expirationTimestamp: at(500_000) })
    expectToMatch(MetadataFileSchema, file)
  })

  it('drops an odd reason or odd counts from another gateway instead of failing the record', () => {
    const parsed = GatewayFileSchema.safeParse({
      cid: 'bafkreiexample',
      path: '/',
      file: 'a',
      details: {
        state: 'staging',
        groups: [{ state: 'writable', reason: 42, reasonCode: 'rm -rf /', groupId: 'x', fileCount: -1 }],
        fileCounts: 'many',
      },
    })
    expect(parsed.success).toBe(true)
    expect(parsed.data!.details!.groups![0]).toEqual({ state: 'writable' })
    expect(parsed.data!.details!.fileCounts).toBeUndefined()
  })

  it('handles top-level files, folders and the root', () => {
    expect(toMetadataFile(record(null), '/a.txt', mainnet)).toMatchObject({ path: '/', file: 'a.txt' })
    expect(toMetadataFile(record(null), '/Photos', mainnet)).toMatchObject({ path: '/', file: 'Photos' })
    expect(toMetadataFile(record(null), '/', mainnet)).toMatchObject({ path: '/', file: '' })
  })

  it('converts a fully offloaded file with expiration on mainnet', () => {
    const d1 = deal(4_000_000, true, 11)
    const d2 = deal(4_100_000, true, 12)
    const file = toMetadataFile(
      record({
        state: 'offloaded',
        retrievableCopies: 2,
        groups: [group('offloaded', [d1, d2])],
      }),
      '/docs/a.txt',
      mainnet,
    )
    expect(file.details).toEqual({
      state: 'Offloaded',
      retrievableCopies: 2,
      expirationEpoch: 4_100_000,
      // mainnet genesis 1598306400 + 4 100 000 × 30 s
      expirationTimestamp: 1598306400 + 4_100_000 * 30,
      groups: [{ state: 'offloaded', pieceCid: 'baga6ea4seaqexample', retrievableCopies: 2, deals: [d1, d2] }],
    })
  })

  it.each([
    ['mainnet', 1598306400],
    ['calibration', 1667326380],
    ['simnet', 1704067200],
  ] as const)('turns the epoch into unix seconds for %s', (name, genesis) => {
    const file = toMetadataFile(
      record({ state: 'offloaded', retrievableCopies: 1, groups: [group('offloaded', [deal(2880)])] }),
      '/a',
      networkClock(name),
    )
    expect(file.details.expirationTimestamp).toBe(genesis + 2880 * 30)
  })

  it('uses the configured genesis of a simulated network', () => {
    const file = toMetadataFile(
      record({ state: 'offloaded', retrievableCopies: 1, groups: [group('offloaded', [deal(10)])] }),
      '/a',
      networkClock('simnet', 1_000),
    )
    expect(file.details.expirationTimestamp).toBe(1_000 + 300)
  })

  it('keeps a group with no piece yet to state and copies only', () => {
    const file = toMetadataFile(
      record({ state: 'staging', retrievableCopies: 0, groups: [{ state: 'writable', retrievableCopies: 0 }] }),
      '/a',
      mainnet,
    )
    expect(file.details.groups).toEqual([{ state: 'writable', retrievableCopies: 0 }])
    expect(file.details).not.toHaveProperty('expirationEpoch')
    expect(file.details).not.toHaveProperty('expirationTimestamp')
  })

  it("passes the gateway's retrievableCopies through and fills it when missing", () => {
    const groups = [group('offloaded', [deal(10), deal(20)]), group('offloaded', [deal(30)])]
    expect(toMetadataFile(record({ state: 'offloaded', retrievableCopies: 7, groups }), '/a', mainnet).details.retrievableCopies).toBe(7)
    expect(toMetadataFile(record({ state: 'offloaded', groups }), '/a', mainnet).details.retrievableCopies).toBe(1)
    const noCount = toMetadataFile(
      record({ state: 'offloaded', groups: [{ state: 'offloaded', deals: [deal(5), deal(6, false)] }] }),
      '/a',
      mainnet,
    )
    expect(noCount.details.groups[0].retrievableCopies).toBe(1)
  })

  it('leaves deal fields unchanged and drops unknown ones', () => {
    const d = { provider: 'f09999', state: 'published', dealId: 77, endEpoch: 123, isRetrievable: false, internal: 'x' }
    const file = toMetadataFile(
      record({ state: 'offloading', retrievableCopies: 0, groups: [group('ready_for_deals', [d])] }),
      '/a',
      mainnet,
    )
    expect(file.details.groups[0]).toEqual({
      state: 'ready for deals',
      pieceCid: 'baga6ea4seaqexample',
      retrievableCopies: 0,
      deals: [{ provider: 'f09999', state: 'published', dealId: 77, endEpoch: 123, isRetrievable: false }],
    })
  })

  it('answers Unknown with no groups when the gateway gave no details', () => {
    expect(toMetadataFile(record(undefined), '/a', mainnet).details).toEqual({ state: 'Unknown', retrievableCopies: 0, groups: [] })
  })

  describe('CIDgravity quirks', () => {
    it('accepts the misspelt expriationEpoch when no groups are listed', () => {
      const file = toMetadataFile(
        record({ state: 'offloaded', retrievableCopies: 1, expriationEpoch: 5000, expriationTimestamp: 1 }),
        '/a',
        mainnet,
      )
      expect(file.details.expirationEpoch).toBe(5000)
      expect(file.details.expirationTimestamp).toBe(1598306400 + 5000 * 30)
    })

    it('keeps a misspelt timestamp when that is all there is', () => {
      const file = toMetadataFile(record({ state: 'offloaded', retrievableCopies: 1, expriationTimestamp: 1_800_000_000 }), '/a', mainnet)
      expect(file.details).not.toHaveProperty('expirationEpoch')
      expect(file.details.expirationTimestamp).toBe(1_800_000_000)
    })

    it('computes from groups rather than trusting a gateway value', () => {
      const file = toMetadataFile(
        record({ state: 'offloaded', retrievableCopies: 1, expriationEpoch: 1, groups: [group('offloaded', [deal(999)])] }),
        '/a',
        mainnet,
      )
      expect(file.details.expirationEpoch).toBe(999)
    })

    it('takes a VRCARDone group reported as full, with its piece CID, unchanged', () => {
      const file = toMetadataFile(record({ state: 'staging', retrievableCopies: 0, groups: [group('full')] }), '/a', mainnet)
      expect(file.details.groups).toEqual([{ state: 'full', pieceCid: 'baga6ea4seaqexample', retrievableCopies: 0 }])
      expect(file.details.state).toBe('Staging')
    })

    it('takes the older spellings', () => {
      const file = toMetadataFile(
        record({ state: 'partially offloaded', retrievableCopies: 1, groups: [group('ready for deals', [deal(10)])] }),
        '/a',
        mainnet,
      )
      expect(file.details.state).toBe('Partially offloaded')
      expect(file.details.groups[0].state).toBe('ready for deals')
    })
  })
})

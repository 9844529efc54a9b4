// @vitest-environment happy-dom
import type { FileState } from '../../plugin-ui/types.ts'

import { register, unregister } from '@nextcloud/l10n'
import { flushPromises, mount, type VueWrapper } from '@vue/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import GatewayTab from '../../plugin-ui/views/GatewayTab.vue'
import { fail, FILE_CID, fileRecord, legacyFile, legacyFolder, ok, PIECE_CID, tabConfig } from './fixtures.ts'
import { CONFIG, http, METADATA } from './http-mock.ts'

vi.mock('@nextcloud/axios', () => import('./http-mock.ts').then((m) => m.axiosModule))

interface TabApi {
  update(info: unknown): void
  setActive(active: boolean): void
}

let wrapper: VueWrapper | undefined

async function showTab(info: unknown = legacyFile()): Promise<VueWrapper> {
  wrapper = mount(GatewayTab, { attachTo: document.body })
  ;(wrapper.vm as unknown as TabApi).update(info)
  await flushPromises()
  return wrapper
}

/** The tab on a file whose record the bridge answers with `record`. */
function showRecord(record: Parameters<typeof ok>[0]): Promise<VueWrapper> {
  http.on('POST', METADATA, ok(record))
  return showTab()
}

const api = (w: VueWrapper) => w.vm as unknown as TabApi
const text = (w: VueWrapper, sel: string) => w.get(`[data-test="${sel}"]`).text()

beforeEach(() => {
  ;(window as unknown as { _oc_webroot: string })._oc_webroot = ''
  http.reset()
  http.on('GET', CONFIG, tabConfig('mainnet'))
})

afterEach(() => {
  wrapper?.unmount()
  wrapper = undefined
  vi.useRealTimers()
  unregister('gateway')
  http.assertNoUnexpected()
})

describe('GatewayTab states', () => {
  const states: FileState[] = ['Staging', 'Offloading', 'Partially offloaded', 'Offloaded', 'Unknown']

  it.each(states)('shows %s as a badge with a one-line explanation', async (state) => {
    const w = await showRecord(fileRecord({ state }))
    expect(text(w, 'state-label')).toBe(state)
    const explanation = text(w, 'state-explanation')
    expect(explanation.length).toBeGreaterThan(20)
    expect(explanation).not.toContain('\n')
  })

  it('gives each state its own explanation', async () => {
    const seen = new Set<string>()
    for (const state of states) {
      http.on('POST', METADATA, ok(fileRecord({ state })))
      const w = await showTab()
      seen.add(text(w, 'state-explanation'))
      w.unmount()
      wrapper = undefined
    }
    expect(seen.size).toBe(states.length)
  })

  it('treats a state it does not know as Unknown', async () => {
    const w = await showRecord(fileRecord({ state: 'exploded' as FileState }))
    expect(text(w, 'state-label')).toBe('Unknown')
  })

  it('asks the bridge for the file path with the OCS header and shows the CID', async () => {
    http.on('POST', METADATA, ok(fileRecord()))
    const w = await showTab(legacyFile('/Documents', 'report.pdf'))
    const [call] = http.callsTo('POST', METADATA)
    expect(call.data).toEqual({ filePath: '/Documents/report.pdf' })
    expect(call.headers['OCS-APIRequest']).toBe('true')
    expect(text(w, 'cid-full')).toBe(FILE_CID)
    expect(text(w, 'kind')).toBe('File')
  })

  it('shows a folder with the aggregated wording', async () => {
    http.on('POST', METADATA, ok(fileRecord({ state: 'Offloaded', retrievableCopies: 2 }, { path: '/', file: 'Photos' })))
    const w = await showTab(legacyFolder('/', 'Photos'))
    expect(http.callsTo('POST', METADATA)[0].data).toEqual({ filePath: '/Photos' })
    expect(text(w, 'kind')).toMatch(/^Folder/)
    expect(text(w, 'state-explanation')).toMatch(/folder/i)
  })

  it('accepts a Nextcloud 33 node as well as a legacy FileInfo', async () => {
    http.on('POST', METADATA, ok(fileRecord()))
    await showTab({ path: '/Documents/report.pdf', basename: 'report.pdf', type: 'file' })
    expect(http.callsTo('POST', METADATA)[0].data).toEqual({ filePath: '/Documents/report.pdf' })
  })
})

describe('GatewayTab details', () => {
  it('says under a group why it is not further along, when the gateway says, and nothing when it does not', async () => {
    const reason = 'waiting for more data: 4.0 MiB of 64 MiB; the group closes when full or after 20 s without new data'
    const w = await showRecord(
      fileRecord({
        groups: [
          { state: 'writable', retrievableCopies: 0, reason },
          { state: 'offloaded', retrievableCopies: 2, pieceCid: PIECE_CID },
        ],
      }),
    )
    const shown = w.findAll('[data-test="group-reason"]')
    expect(shown.map((r) => r.text())).toEqual([reason])
  })

  it('marks a reason a person has to act on, such as no funds, as needing attention, and one that passes by itself not', async () => {
    const funds = 'no funds: deposit USDFC: storing needs 0.36 USDFC more; meanwhile: 3 of 3 copies stored'
    const w = await showRecord(
      fileRecord({
        groups: [
          { state: 'ready for deals', retrievableCopies: 0, reason: funds, reasonCode: 'WAITING_FOR_FUNDS' },
          { state: 'ready for deals', retrievableCopies: 0, reason: '1 provider is fetching the data', reasonCode: 'DEALS_UNDER_WAY' },
        ],
      }),
    )
    expect(w.findAll('[data-test="group-attention"]').map((r) => r.text())).toEqual(['Needs attention: no funds'])
    expect(w.findAll('[data-test="group-reason"]').map((r) => r.text())).toEqual([funds, '1 provider is fetching the data'])
  })

  it('shows a far expiration as a local date alone, as Nextcloud would', async () => {
    const expirationTimestamp = Math.floor(Date.now() / 1000) + 540 * 86400
    const w = await showRecord(fileRecord({ state: 'Offloaded', retrievableCopies: 2, expirationEpoch: 5_000_000, expirationTimestamp }))
    const local = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(expirationTimestamp * 1000))
    expect(text(w, 'expiration')).toBe(local)
  })

  it('shows a near expiration as a local date and a relative time', async () => {
    const expirationTimestamp = Math.floor(Date.now() / 1000) + 3 * 86400
    const w = await showRecord(fileRecord({ state: 'Offloaded', retrievableCopies: 2, expirationEpoch: 5_000_000, expirationTimestamp }))
    const time = w.get('[data-test="expiration"] time')
    expect(time.attributes('datetime')).toBe(new Date(expirationTimestamp * 1000).toISOString())
    const local = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(expirationTimestamp * 1000))
    expect(time.text()).toBe(local)
    // The date, a space, then the relative time.
    expect(text(w, 'expiration')).toBe(`${local} (in 3 days)`)
    expect(text(w, 'copies')).toBe('2 copies')
  })

  it('says when nothing is retrievable yet instead of an expiration', async () => {
    const w = await showRecord(fileRecord())
    expect(w.find('[data-test="expiration"] time').exists()).toBe(false)
    expect(text(w, 'copies')).toBe('0 copies')
  })

  const offloaded = () =>
    fileRecord({
      state: 'Offloaded',
      retrievableCopies: 1,
      expirationTimestamp: 1_900_000_000,
      groups: [
        {
          state: 'offloaded',
          pieceCid: PIECE_CID,
          retrievableCopies: 1,
          deals: [
            { provider: 'f01234', dealId: 98765, endEpoch: 4_000_000, isRetrievable: true, state: 'active' },
            { provider: 'f05678', dealId: 98766, endEpoch: 4_000_000, isRetrievable: false, state: 'published' },
          ],
        },
        { state: 'ready for deals', retrievableCopies: 0 },
      ],
    })

  it('lists groups and deals with Filfox links on mainnet', async () => {
    http.on('POST', METADATA, ok(offloaded()))
    const w = await showTab()
    const groups = w.findAll('[data-test="group"]')
    expect(groups).toHaveLength(2)
    expect(groups[0].get('[data-test="group-state"]').text()).toBe('Offloaded')
    expect(groups[0].get('[data-test="cid-full"]').text()).toBe(PIECE_CID)
    expect(groups[0].get('[data-test="group-copies"]').text()).toBe('1 retrievable copy')
    expect(groups[1].get('[data-test="group-state"]').text()).toBe('Ready for deals')
    expect(groups[1].find('[data-test="no-deals"]').exists()).toBe(true)

    const deals = groups[0].findAll('[data-test="deal"]')
    expect(deals).toHaveLength(2)
    expect(deals[0].get('[data-test="provider-link"]').attributes('href')).toBe('https://filfox.info/en/address/f01234')
    expect(deals[0].get('[data-test="deal-link"]').attributes('href')).toBe('https://filfox.info/en/deal/98765')
    expect(deals[0].get('[data-test="deal-retrievable"]').text()).toBe('Yes')
    expect(deals[1].get('[data-test="deal-retrievable"]').text()).toBe('Not yet confirmed')
    // Mainnet genesis 1598306400 + 4 000 000 epochs × 30 s.
    expect(deals[0].get('[data-test="deal-end"] time').attributes('datetime')).toBe(
      new Date((1598306400 + 4_000_000 * 30) * 1000).toISOString(),
    )
  })

  it('shows a proposed deal without the 0 the wire carries for a deal id it does not have yet, and no link', async () => {
    const record = offloaded()
    record.details.groups[0].deals![1] = { ...record.details.groups[0].deals![1], dealId: 0, state: 'proposed' }
    http.on('POST', METADATA, ok(record))
    const w = await showTab()
    const deal = w.findAll('[data-test="group"]')[0].findAll('[data-test="deal"]')[1]
    expect(deal.find('[data-test="deal-link"]').exists()).toBe(false)
    expect(deal.get('[data-test="deal-id"]').text()).toBe('no id until published')
    expect(deal.text()).not.toMatch(/\b0 ·/)
  })

  it('keeps each group to one summary line, and says when its deals are under way', async () => {
    const deal = (state: 'active' | 'published', dealId: number) => ({
      provider: 'f01234',
      dealId,
      endEpoch: 4_000_000,
      isRetrievable: state === 'active',
      state,
    })
    const w = await showRecord(
      fileRecord({
        state: 'Partially offloaded',
        groups: [{ state: 'ready for deals', retrievableCopies: 1, pieceCid: PIECE_CID, deals: [deal('active', 1), deal('published', 2)] }],
      }),
    )
    expect(text(w, 'group-state')).toBe('deals in progress: 1 active, 1 published')
    // Closed by default (the browser test opens one with a click).
    expect((w.get('[data-test="group"] details').element as HTMLDetailsElement).open).toBe(false)
  })

  it('folds the providers that failed to seal into one line per group, opened on click, beside the live deals', async () => {
    const active = { provider: 'f01234', dealId: 98765, endEpoch: 4_000_000, isRetrievable: true, state: 'active' }
    const w = await showRecord(
      fileRecord({
        state: 'Offloading',
        groups: [
          {
            state: 'ready for deals',
            retrievableCopies: 1,
            pieceCid: PIECE_CID,
            deals: [active],
            failedDeals: [{ provider: 'f09999', dealId: 98700, reason: 'SEALING_FAILED', replaced: true }],
          },
          {
            state: 'ready for deals',
            retrievableCopies: 0,
            pieceCid: PIECE_CID,
            deals: [],
            failedDeals: [
              { provider: 'f07777', dealId: 98701, reason: 'NOT_SEALED_IN_TIME', reasonCode: 'NOT_SEALED_IN_TIME', replaced: true },
              { provider: 'f08888', reason: 'the sector could not be committed', reasonCode: 'PROVIDER_FAILED', replaced: false },
              { provider: 'f06666', reason: 'SEALING_FAILED', replaced: false },
            ],
          },
          { state: 'ready for deals', retrievableCopies: 0, pieceCid: PIECE_CID, deals: [active] },
        ],
      }),
    )
    const groups = w.findAll('[data-test="group"]')
    expect(groups[0].get('[data-test="failed-summary"]').text()).toBe('1 provider failed to seal, replaced')
    expect(groups[1].get('[data-test="failed-summary"]').text()).toBe('3 providers failed to seal; 1 replaced')
    expect(groups[2].find('[data-test="failed-deals"]').exists()).toBe(false)
    // The failure is not counted among the deals, and stays folded until clicked.
    expect(groups[0].findAll('[data-test="deal"]')).toHaveLength(1)
    const folded = groups[0].get('[data-test="failed-deals"]')
    expect(folded.element.tagName).toBe('DETAILS')
    expect((folded.element as HTMLDetailsElement).open).toBe(false)
    await groups[1].get('[data-test="failed-summary"]').trigger('click')
    const failed = groups[1].findAll('[data-test="failed-deal"]')
    expect(failed.map((f) => f.text())).toEqual([
      'f07777 · deal 98701 · not sealed before the deal was due to start · replaced',
      'f08888 · the provider gave up: the sector could not be committed · not replaced yet',
      // A gateway that sends no code (CIDgravity's): its words as they came.
      'f06666 · SEALING_FAILED · not replaced yet',
    ])
    expect(failed[0].get('a').attributes('href')).toBe('https://filfox.info/en/address/f07777')
  })

  it('shows a PDP copy as a warm copy: its provider and data set in words, when it was last proved, and how long it is funded', async () => {
    // A genesis an hour ago on 30 s epochs: epoch 20 was 50 minutes ago, today (or, just after midnight, yesterday).
    const genesis = Math.floor(Date.now() / 1000) - 3600
    http.on('GET', CONFIG, tabConfig('mainnet', 'https://ipfs.example.org', genesis))
    const pdp = {
      provider: 'pdp:3',
      dealId: 12,
      endEpoch: 90_000,
      isRetrievable: true,
      state: 'active',
      route: 'pdp' as const,
      dataSetId: 12,
      pieceId: 0,
      lastProofEpoch: 20,
    }
    const waiting = {
      provider: 'pdp:4',
      dealId: 7,
      endEpoch: 90_000,
      isRetrievable: false,
      state: 'published',
      route: 'pdp' as const,
      dataSetId: 7,
      pieceId: 2,
    }
    const w = await showRecord(
      fileRecord({
        state: 'Offloading',
        groups: [{ state: 'ready for deals', retrievableCopies: 1, pieceCid: PIECE_CID, deals: [pdp, waiting] }],
      }),
    )
    const [proved, unproved] = w.findAll('[data-test="deal"]')
    // No deal-market explorer knows PDP providers or data sets: words, no links, even on mainnet.
    expect(proved.find('a').exists()).toBe(false)
    expect(proved.get('[data-test="provider"]').text()).toBe('PDP provider 3')
    expect(proved.get('[data-test="pdp-copy"]').text()).toBe('data set 12, piece 0 · Proved')
    expect(proved.get('[data-test="pdp-proof"]').text()).toMatch(/^proved (today|yesterday) at \d{1,2}:\d{2}/)
    expect(proved.get('[data-test="pdp-proof"] time').attributes('datetime')).toBe(new Date((genesis + 20 * 30) * 1000).toISOString())
    expect(proved.findAll('dt').map((d) => d.text())).toEqual(['Provider', 'Warm copy', 'Last proof', 'Funded until', 'Retrievable'])
    expect(unproved.get('[data-test="pdp-copy"]').text()).toBe('data set 7, piece 2 · Committed on chain, not proved yet')
    // A gateway that does not say when (an older one): no time made up.
    expect(unproved.get('[data-test="pdp-proof"]').text()).toBe('waiting for its first proof')
  })

  it("says when a committed PDP copy's first proof is due, from the data set's proving schedule (mainnet: the next day)", async () => {
    // Now: 10:05 local time; the first proof's window opens tomorrow at 14:20 local time, 30 s epochs from a genesis
    // chosen so that the due time falls on an epoch in any time zone.
    vi.useFakeTimers({ now: new Date(2026, 10, 27, 10, 5), toFake: ['Date'] })
    const due = new Date(2026, 10, 28, 14, 20).getTime() / 1000
    const genesis = due - 30 * 3_000_000
    http.on('GET', CONFIG, tabConfig('mainnet', 'https://ipfs.example.org', genesis))
    const copy = (milestone: 'uploading' | 'committed' | 'proved', state: string, more: object = {}) => ({
      provider: 'pdp:3',
      dealId: 12,
      endEpoch: 3_200_000,
      isRetrievable: milestone === 'proved',
      state,
      route: 'pdp' as const,
      milestone,
      ...more,
    })
    const copies = [
      copy('committed', 'published', { dataSetId: 12, pieceId: 4, firstProofDueEpoch: 3_000_000, firstProofDueTimestamp: due }),
      copy('uploading', 'proposed'),
    ]
    const w = await showRecord(
      fileRecord({
        state: 'Offloading',
        groups: [{ state: 'ready for deals', retrievableCopies: 0, pieceCid: PIECE_CID, deals: copies }],
      }),
    )
    const [committed, uploading] = w.findAll('[data-test="deal"]')
    expect(committed.get('[data-test="pdp-copy"]').text()).toBe('data set 12, piece 4 · Committed on chain, not proved yet')
    const when = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' }).format(new Date(due * 1000))
    expect(committed.get('[data-test="pdp-proof"]').text()).toBe(`first proof due tomorrow about ${when}`)
    expect(committed.get('[data-test="pdp-first-proof"]').attributes('datetime')).toBe(new Date(due * 1000).toISOString())
    expect(uploading.get('[data-test="pdp-copy"]').text()).toBe('being added on chain · Uploading')
    expect(uploading.get('[data-test="pdp-proof"]').text()).toBe('none before it is committed on chain')
  })

  it('says a proved PDP copy missed its proof on <date> and stops counting after <date>, dated as the record dates them, as needing attention', async () => {
    // The record's dates (the bridge's clock for the chain the copy is on), not the tab's: an epoch of the
    // configured network's clock would put them elsewhere.
    const missedAt = new Date(2026, 10, 27, 10, 5).getTime() / 1000
    const stopsAt = missedAt + 2 * 86400
    const copy = {
      provider: 'pdp:2',
      dealId: 12,
      endEpoch: 90_000,
      isRetrievable: true,
      state: 'active',
      route: 'pdp' as const,
      milestone: 'proved' as const,
      dataSetId: 12,
      pieceId: 0,
      lastProofEpoch: 20,
      missedProofEpoch: 4_000_000,
      missedProofTimestamp: missedAt,
      stopsCountingEpoch: 4_005_760,
      stopsCountingTimestamp: stopsAt,
    }
    const reason =
      'the PDP copy on pdp:2 missed its proof; it stops counting in about 2 days unless its provider proves again (another copy is made then)'
    const w = await showRecord(
      fileRecord({
        state: 'Offloaded',
        groups: [{ state: 'offloaded', retrievableCopies: 1, pieceCid: PIECE_CID, deals: [copy], reason, reasonCode: 'PROOF_MISSED' }],
      }),
    )
    const date = (seconds: number) =>
      new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(seconds * 1000))
    const deal = w.get('[data-test="deal"]')
    expect(deal.findAll('dt').map((d) => d.text())).toEqual([
      'Provider',
      'Warm copy',
      'Last proof',
      'Proof missed',
      'Funded until',
      'Retrievable',
    ])
    expect(deal.get('[data-test="pdp-missed"]').text()).toBe(`missed its proof on ${date(missedAt)}; stops counting after ${date(stopsAt)}`)
    expect(deal.get('[data-test="pdp-missed-on"]').attributes('datetime')).toBe(new Date(missedAt * 1000).toISOString())
    expect(w.findAll('[data-test="group-attention"]').map((r) => r.text())).toEqual(['Needs attention: a copy missed its proof'])
    expect(text(w, 'group-reason')).toBe(reason)
  })

  it("dates a PDP copy's last proof, first proof and funding from the record's own times, its chain's clock, not the network's", async () => {
    // The tab's network clock (the deal market's): 30 s epochs from an hour ago. The Onchain Cloud's FEVM chain is
    // another chain: its epoch 20 was proved ten minutes ago, its epoch 90 000 is funded until three days from now.
    const now = Math.floor(Date.now() / 1000)
    http.on('GET', CONFIG, tabConfig('mainnet', 'https://ipfs.example.org', now - 3600))
    const proof = now - 600
    const end = now + 3 * 86400
    const due = now + 7200
    const pdp = { route: 'pdp' as const, dealId: 12, endEpoch: 90_000, endTimestamp: end, dataSetId: 12 }
    const w = await showRecord(
      fileRecord({
        state: 'Offloading',
        groups: [
          {
            state: 'ready for deals',
            retrievableCopies: 1,
            pieceCid: PIECE_CID,
            deals: [
              {
                ...pdp,
                provider: 'pdp:3',
                state: 'active',
                isRetrievable: true,
                pieceId: 0,
                lastProofEpoch: 20,
                lastProofTimestamp: proof,
              },
              {
                ...pdp,
                provider: 'pdp:4',
                state: 'published',
                isRetrievable: false,
                pieceId: 2,
                milestone: 'committed',
                firstProofDueEpoch: 240,
                firstProofDueTimestamp: due,
              },
            ],
          },
        ],
      }),
    )
    const [proved, committed] = w.findAll('[data-test="deal"]')
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString()
    expect(proved.get('[data-test="pdp-proof"] time').attributes('datetime')).toBe(iso(proof))
    expect(proved.get('[data-test="deal-end"] time').attributes('datetime')).toBe(iso(end))
    expect(committed.get('[data-test="pdp-first-proof"]').attributes('datetime')).toBe(iso(due))
    // Funded three days ahead on its own clock: the tab warns, where the network's clock would put epoch 90 000 a month away.
    expect(w.get('[data-test="funding-short"]').text()).toMatch(/funded only until/)
  })

  it('warns on an offloaded file that its warm copies are funded 14 days or less, and says so louder once the funds ran out', async () => {
    // Mainnet's clock from its genesis: an epoch `days` from now.
    const genesis = 1598306400
    const epochIn = (days: number) => Math.round((Date.now() / 1000 + days * 86400 - genesis) / 30)
    const record = (days: number) =>
      ok(
        fileRecord({
          state: 'Offloaded',
          groups: [
            {
              state: 'offloaded',
              retrievableCopies: 2,
              pieceCid: PIECE_CID,
              deals: [
                {
                  provider: 'pdp:3',
                  dealId: 12,
                  endEpoch: epochIn(days),
                  isRetrievable: true,
                  state: 'active',
                  route: 'pdp' as const,
                  dataSetId: 12,
                  pieceId: 0,
                },
              ],
            },
          ],
        }),
      )
    http.on('POST', METADATA, record(60))
    expect((await showTab()).find('[data-test="funding-short"]').exists()).toBe(false)
    wrapper!.unmount()

    http.on('POST', METADATA, record(10))
    const warned = (await showTab()).get('[data-test="funding-short"]')
    expect(warned.text()).toMatch(
      /^The warm copies below are funded only until .+: after that their providers may drop them\. An administrator should deposit USDFC\.$/,
    )
    expect(warned.text()).toContain(new Date((genesis + epochIn(10) * 30) * 1000).getFullYear().toString())
    wrapper!.unmount()

    http.on('POST', METADATA, record(-1))
    expect((await showTab()).get('[data-test="funding-short"]').text()).toMatch(/has run out of funds/)
  })

  it('says "2 providers failed to seal; replaced" when every failure was replaced', async () => {
    const failure = (provider: string) => ({ provider, reason: 'SEALING_FAILED', replaced: true })
    const w = await showRecord(
      fileRecord({
        state: 'Offloading',
        groups: [{ state: 'ready for deals', retrievableCopies: 0, failedDeals: [failure('f01'), failure('f02')] }],
      }),
    )
    expect(text(w, 'failed-summary')).toBe('2 providers failed to seal; replaced')
  })

  it('links to the calibration explorer on calibration', async () => {
    http.on('GET', CONFIG, tabConfig('calibration'))
    http.on('POST', METADATA, ok(offloaded()))
    const w = await showTab()
    const deal = w.get('[data-test="deal"]')
    expect(deal.get('[data-test="provider-link"]').attributes('href')).toBe('https://calibration.filfox.info/en/address/f01234')
    expect(deal.get('[data-test="deal-link"]').attributes('href')).toBe('https://calibration.filfox.info/en/deal/98765')
  })

  it('shows no explorer links on the simulated network, and end dates from its genesis', async () => {
    http.on('GET', CONFIG, tabConfig('simnet', 'https://ipfs.example.org', 1_700_000_000))
    http.on('POST', METADATA, ok(offloaded()))
    const w = await showTab()
    const deal = w.get('[data-test="deal"]')
    expect(deal.find('a').exists()).toBe(false)
    expect(deal.get('[data-test="provider"]').text()).toBe('f01234')
    // Offloaded, yet no "Open on IPFS": nothing on the simulated network is published.
    expect(w.find('[data-test="ipfs-link"]').exists()).toBe(false)
    expect(deal.get('[data-test="deal-end"] time').attributes('datetime')).toBe(
      new Date((1_700_000_000 + 4_000_000 * 30) * 1000).toISOString(),
    )
  })

  it('on a sped-up simulated network, says its pace and dates deal ends on its shorter epochs', async () => {
    // 1 minute ≈ 5 hours: 0.1 s per epoch from a genesis moved close to now.
    http.on('GET', CONFIG, tabConfig('simnet', '', 1_795_000_000, { epochSeconds: 0.1, speed: '1 minute ≈ 5 hours' }))
    http.on('POST', METADATA, ok(offloaded()))
    const w = await showTab()
    expect(text(w, 'simnet-note')).toBe('Simulated network, 1 minute ≈ 5 hours: these deals are not on Filecoin.')
    expect(w.get('[data-test="deal-end"] time').attributes('datetime')).toBe(new Date((1_795_000_000 + 400_000) * 1000).toISOString())
  })

  it("says beside the expiration date how far it is on a sped-up simulated network's clock", async () => {
    // 0.1 s per epoch: 300 times real time, so 540 days of the network's time pass in under two days.
    http.on('GET', CONFIG, tabConfig('simnet', '', 1_795_000_000, { epochSeconds: 0.1, speed: '1 minute ≈ 5 hours' }))
    const expirationTimestamp = Math.floor(Date.now() / 1000) + (540 * 86400) / 300
    const w = await showRecord(fileRecord({ state: 'Offloaded', retrievableCopies: 1, expirationEpoch: 5_000_000, expirationTimestamp }))
    expect(text(w, 'expiration-simulated')).toBe('simulated network: 540 days of its time')
    expect(text(w, 'expiration')).toMatch(/\(in 2 days\)\s*simulated network: 540 days of its time$/)
  })

  it("says when copies end at different times, and nothing of it on a real network's single end", async () => {
    http.on('GET', CONFIG, tabConfig('mainnet', '', 1_598_306_400))
    const deal = (endEpoch: number) => ({ provider: 'f01234', dealId: endEpoch, endEpoch, isRetrievable: true, state: 'active' })
    const at = (epoch: number) =>
      new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date((1_598_306_400 + epoch * 30) * 1000))
    http.on(
      'POST',
      METADATA,
      ok(
        fileRecord({
          state: 'Offloaded',
          retrievableCopies: 2,
          expirationTimestamp: 1_900_000_000,
          groups: [{ state: 'offloaded', retrievableCopies: 2, deals: [deal(6_000_000), deal(7_000_000)] }],
        }),
      ),
      ok(offloaded()),
    )
    const w = await showTab()
    expect(text(w, 'copies-end')).toBe(`Copies end between ${at(6_000_000)} and ${at(7_000_000)}`)
    expect(w.find('[data-test="expiration-simulated"]').exists()).toBe(false)
  })

  it('says nothing of a simulated network on a real one', async () => {
    http.on('POST', METADATA, ok(offloaded()))
    const w = await showTab()
    expect(w.find('[data-test="simnet-note"]').exists()).toBe(false)
  })

  it('links the CID to the IPFS gateway only once the data is on the network', async () => {
    http.on('POST', METADATA, ok(fileRecord()), ok(offloaded()))
    const w = await showTab()
    expect(w.find('[data-test="ipfs-link"]').exists()).toBe(false)
    api(w).update(legacyFile('/Documents', 'other.pdf'))
    await flushPromises()
    expect(w.get('[data-test="ipfs-link"]').attributes('href')).toBe(`https://ipfs.example.org/ipfs/${FILE_CID}`)
  })

  it('falls back to no links when the bridge has no config route', async () => {
    http.on('GET', CONFIG, fail(404, 'Not found'))
    http.on('POST', METADATA, ok(offloaded()))
    const w = await showTab()
    expect(w.find('[data-test="ipfs-link"]').exists()).toBe(false)
    expect(w.find('[data-test="provider-link"]').exists()).toBe(false)
    expect(w.find('[data-test="record"]').exists()).toBe(true)
  })

  it('copies the full CID with the copy button and says so', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined)
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true })
    const w = await showRecord(fileRecord())
    const button = w.get('[data-test="copy"]')
    expect(button.attributes('aria-label')).toMatch(/^Copy /)
    await button.trigger('click')
    await flushPromises()
    expect(writeText).toHaveBeenCalledWith(FILE_CID)
    // Seen, not only announced: the text shows and the icon turns into a check mark, for a few seconds.
    const status = w.get('[data-test="copy-status"]')
    expect(status.text()).toMatch(/copied/)
    expect(status.classes()).not.toContain('gateway-sr-only')
    expect(w.get('[data-test="copy-icon"]').html()).toContain('M9 16.2')
  })

  it('copies the whole CID when the shortened one is selected and copied with the mouse', async () => {
    const w = await showRecord(fileRecord())
    const value = w.get('[data-test="cid-value"]')
    expect(value.text()).toContain('…')
    const data = new Map<string, string>()
    const event = new Event('copy', { bubbles: true, cancelable: true }) as ClipboardEvent
    Object.defineProperty(event, 'clipboardData', { value: { setData: (type: string, v: string) => data.set(type, v) } })
    value.element.dispatchEvent(event)
    expect(data.get('text/plain')).toBe(FILE_CID)
    expect(event.defaultPrevented).toBe(true)
  })
})

describe('GatewayTab empty and error states', () => {
  it('shows the empty state when the file is not on the gateway (404)', async () => {
    http.on('POST', METADATA, fail(404, 'No such file or folder'))
    const w = await showTab()
    expect(w.find('[data-test="empty"]').exists()).toBe(true)
    expect(w.find('[data-test="error"]').exists()).toBe(false)
    expect(w.find('[data-test="retry"]').exists()).toBe(false)
  })

  it.each([
    [502, 'The gateway could not be reached'],
    [504, 'The gateway did not answer in time'],
    [401, 'Wrong credentials'],
  ])('shows the bridge message for %i with a retry that fetches again', async (status, message) => {
    http.on('POST', METADATA, fail(status, message), ok(fileRecord({ state: 'Offloading' })))
    const w = await showTab()
    expect(w.get('[data-test="error"]').attributes('role')).toBe('alert')
    expect(text(w, 'error')).toContain(message)
    await w.get('[data-test="retry"] button, button[data-test="retry"]').trigger('click')
    await flushPromises()
    expect(http.callsTo('POST', METADATA)).toHaveLength(2)
    expect(w.find('[data-test="error"]').exists()).toBe(false)
    expect(text(w, 'state-label')).toBe('Offloading')
  })

  it('shows an error, not a crash, for an answer it does not understand', async () => {
    http.on('POST', METADATA, { status: 200, data: '<html>login</html>' })
    const w = await showTab()
    expect(w.find('[data-test="error"]').exists()).toBe(true)
  })

  it('shows the loading skeleton until the answer arrives', async () => {
    let answer: (r: ReturnType<typeof ok>) => void = () => {}
    http.on(
      'POST',
      METADATA,
      () =>
        new Promise((resolve) => {
          answer = resolve
        }),
    )
    wrapper = mount(GatewayTab)
    api(wrapper).update(legacyFile())
    await flushPromises()
    expect(wrapper.find('[data-test="loading"]').exists()).toBe(true)
    answer(ok(fileRecord()))
    await flushPromises()
    expect(wrapper.find('[data-test="loading"]').exists()).toBe(false)
    expect(wrapper.find('[data-test="record"]').exists()).toBe(true)
  })

  it('shows the file picked last when answers arrive out of order', async () => {
    const pending: Array<() => void> = []
    http.on(
      'POST',
      METADATA,
      (req) =>
        new Promise((resolve) => {
          const { filePath } = req.data as { filePath: string }
          pending.push(() => resolve(ok(fileRecord({ state: filePath.endsWith('a.txt') ? 'Staging' : 'Offloaded' }))))
        }),
    )
    wrapper = mount(GatewayTab)
    api(wrapper).update(legacyFile('/', 'a.txt'))
    await flushPromises()
    api(wrapper).update(legacyFile('/', 'b.txt'))
    await flushPromises()
    pending[1]()
    pending[0]()
    await flushPromises()
    expect(text(wrapper, 'state-label')).toBe('Offloaded')
  })
})

describe('GatewayTab auto-refresh', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  })

  it('refreshes every 10 s while the state can change and stops once Offloaded', async () => {
    http.on(
      'POST',
      METADATA,
      ok(fileRecord({ state: 'Staging' })),
      ok(fileRecord({ state: 'Offloading' })),
      ok(fileRecord({ state: 'Offloaded', retrievableCopies: 1 })),
    )
    const w = await showTab()
    expect(http.callsTo('POST', METADATA)).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(http.callsTo('POST', METADATA)).toHaveLength(2)
    expect(text(w, 'state-label')).toBe('Offloading')
    expect(text(w, 'announcement')).toContain('Offloading')
    await vi.advanceTimersByTimeAsync(10_000)
    expect(text(w, 'state-label')).toBe('Offloaded')
    await vi.advanceTimersByTimeAsync(60_000)
    expect(http.callsTo('POST', METADATA)).toHaveLength(3)
  })

  it('stops refreshing when the tab is destroyed', async () => {
    const w = await showRecord(fileRecord({ state: 'Staging' }))
    w.unmount()
    wrapper = undefined
    await vi.advanceTimersByTimeAsync(60_000)
    expect(http.callsTo('POST', METADATA)).toHaveLength(1)
  })

  it('pauses while the tab is hidden and refreshes when shown again', async () => {
    const w = await showRecord(fileRecord({ state: 'Staging' }))
    api(w).setActive(false)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(http.callsTo('POST', METADATA)).toHaveLength(1)
    api(w).setActive(true)
    await vi.advanceTimersByTimeAsync(0)
    expect(http.callsTo('POST', METADATA)).toHaveLength(2)
  })

  it('pauses while the browser tab is hidden', async () => {
    http.on('POST', METADATA, ok(fileRecord({ state: 'Staging' })))
    await showTab()
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true })
    document.dispatchEvent(new Event('visibilitychange'))
    await vi.advanceTimersByTimeAsync(60_000)
    expect(http.callsTo('POST', METADATA)).toHaveLength(1)
    Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true })
    document.dispatchEvent(new Event('visibilitychange'))
    await vi.advanceTimersByTimeAsync(0)
    expect(http.callsTo('POST', METADATA)).toHaveLength(2)
  })

  it('keeps showing the record with a notice when a refresh fails', async () => {
    http.on(
      'POST',
      METADATA,
      ok(fileRecord({ state: 'Staging' })),
      fail(502, 'Gateway unreachable'),
      ok(fileRecord({ state: 'Offloading' })),
    )
    const w = await showTab()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(text(w, 'state-label')).toBe('Staging')
    expect(text(w, 'refresh-error')).toContain('Gateway unreachable')
    await vi.advanceTimersByTimeAsync(10_000)
    expect(w.find('[data-test="refresh-error"]').exists()).toBe(false)
    expect(text(w, 'state-label')).toBe('Offloading')
  })

  it('does not poll a file that is not on the gateway', async () => {
    http.on('POST', METADATA, fail(404, 'No such file'))
    await showTab()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(http.callsTo('POST', METADATA)).toHaveLength(1)
  })
})

describe('GatewayTab folders', () => {
  it("says where the folder's files are, not only an aggregate state", async () => {
    http.on('POST', METADATA, ok(fileRecord({ state: 'Staging', fileCounts: { Offloaded: 5, Staging: 1 } })))
    const w = await showTab(legacyFolder())
    expect(text(w, 'file-counts')).toBe('5 of 6 files offloaded, 1 staging')
    expect(text(w, 'state-explanation')).toMatch(/^Some files are still being packed/)
  })

  it("says that the files are all stored and only the folder's listing is pending, not that files are still being packed", async () => {
    http.on(
      'POST',
      METADATA,
      ok(
        fileRecord({
          state: 'Staging',
          fileCounts: { Offloaded: 23 },
          groups: [
            { groupId: 4, state: 'offloaded', retrievableCopies: 2, pieceCid: PIECE_CID, fileCount: 23 },
            { groupId: 9, state: 'writable', retrievableCopies: 0, fileCount: 0 },
          ],
        }),
      ),
    )
    const w = await showTab(legacyFolder())
    expect(text(w, 'state-label')).toBe('Staging')
    expect(text(w, 'state-explanation')).toBe(
      "All 23 files below are stored; the folder's own listing is being packed and stored the same way.",
    )
  })

  it("says how many of the folder's files each group holds, under the gateway's own group numbers", async () => {
    http.on(
      'POST',
      METADATA,
      ok(
        fileRecord({
          state: 'Staging',
          groups: [
            { groupId: 4, state: 'offloaded', retrievableCopies: 3, pieceCid: PIECE_CID, fileCount: 5 },
            { groupId: 9, state: 'writable', retrievableCopies: 0, fileCount: 0 },
          ],
        }),
      ),
    )
    const w = await showTab(legacyFolder())
    expect(w.findAll('[data-test="group-name"]').map((g) => g.text())).toEqual(['Group 4', 'Group 9'])
    expect(w.findAll('[data-test="group-files"]').map((g) => g.text())).toEqual([
      'Holds data of 5 files of this folder',
      "Holds this folder's own listing",
    ])
  })

  it('numbers groups by position when the gateway gives no numbers, and says nothing of files for a file', async () => {
    const w = await showRecord(
      fileRecord({
        state: 'Staging',
        groups: [
          { state: 'writable', retrievableCopies: 0 },
          { state: 'full', retrievableCopies: 0 },
        ],
      }),
    )
    expect(w.findAll('[data-test="group-name"]').map((g) => g.text())).toEqual(['Group 1', 'Group 2'])
    expect(w.find('[data-test="group-files"]').exists()).toBe(false)
  })

  it('shows no counts for a file, or from a gateway that does not send them', async () => {
    http.on('POST', METADATA, ok(fileRecord({ state: 'Staging' })))
    const w = await showTab(legacyFolder())
    expect(w.find('[data-test="file-counts"]').exists()).toBe(false)
  })
})

describe('GatewayTab words explained', () => {
  it('gives CID, piece CID, group, provider and deal a one-sentence tooltip, translated', async () => {
    register('gateway', {
      'Deal: a contract on the Filecoin chain in which a storage provider promises to keep a piece for a given time.':
        'Deal: ein Vertrag …',
    })
    const w = await showRecord(
      fileRecord({
        state: 'Offloaded',
        groups: [
          {
            state: 'offloaded',
            retrievableCopies: 1,
            pieceCid: PIECE_CID,
            deals: [{ provider: 'f01234', dealId: 7, endEpoch: 4_000_000, isRetrievable: true, state: 'active' }],
          },
        ],
      }),
    )
    const labels = w.findAll('[data-test="cid-label"]').map((l) => l.attributes('title'))
    expect(labels[0]).toMatch(/^Content ID: a fingerprint/)
    expect(labels[1]).toMatch(/^Piece CID: /)
    // One group, several piece CIDs elsewhere (a padded one, a v2 one): the tooltip says why (issue 38, item 7).
    expect(labels[1]).toMatch(/larger piece size.*v2 piece CID/)
    expect(w.get('[data-test="group-name"]').attributes('title')).toMatch(/^Group: files are packed/)
    const terms = w
      .findAll('[data-test="deal"] dt')
      .map((d) => d.attributes('title'))
      .filter(Boolean)
    expect(terms[0]).toMatch(/^Storage provider: /)
    expect(terms[1]).toBe('Deal: ein Vertrag …')
  })
})

describe('GatewayTab translations', () => {
  it('translates its strings through the gateway app id', async () => {
    register('gateway', {
      Offloaded: 'Ausgelagert',
      'Data groups': 'Datengruppen',
      'Content ID (CID)': 'Inhalts-ID (CID)',
    })
    const w = await showRecord(fileRecord({ state: 'Offloaded', retrievableCopies: 1 }))
    expect(text(w, 'state-label')).toBe('Ausgelagert')
    expect(w.text()).toContain('Datengruppen')
    expect(w.text()).toContain('Inhalts-ID (CID)')
  })
})

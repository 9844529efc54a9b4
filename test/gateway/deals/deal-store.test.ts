import { describe, expect, it } from 'vitest'
import { createDealStore } from '../../../server/gateway/deals/deal-store.ts'
import { openDatabase } from '../../../server/shared/db.ts'

const fresh = () => {
  let t = 1_000
  const store = createDealStore(openDatabase(':memory:'), () => (t += 10))
  const deal = store.create({ groupId: 1, provider: 'f01000', pieceCid: 'baga6ea4seaq', startEpoch: 100, endEpoch: 200, tokenHash: 'h', proposalEpoch: 40 })
  return { store, deal }
}

describe('deal transitions', () => {
  it('moves a deal along proposing → proposed → published → active → ended, each change recorded with its time', () => {
    const { store, deal } = fresh()
    expect(store.markAccepted(deal.id, 'uuid-1')).toBe(true)
    expect(store.markPublished(deal.id, 77)).toBe(true)
    expect(store.markActive(deal.id)).toBe(true)
    expect(store.markEnded(deal.id, 'EXPIRED')).toBe(true)
    const audit = store.auditOf('uuid-1')!
    expect(audit).toMatchObject({ state: 'ended', dealId: 77, reason: 'EXPIRED', proposalEpoch: 40 })
    expect(audit.events.map((e) => [e.state, e.reason])).toEqual([['proposing', undefined], ['proposed', undefined], ['published', 'deal 77'], ['active', undefined], ['ended', 'EXPIRED']])
    expect(audit.events.map((e) => e.atMs)).toEqual([...audit.events.map((e) => e.atMs)].sort((a, b) => a - b))
  })

  it('refuses moves the table does not allow, changing and recording nothing', () => {
    const { store, deal } = fresh()
    // A status answer that arrives after the deal failed must not bring it back.
    expect(store.markFailed(deal.id, 'PROPOSAL_TIMEOUT')).toBe(true)
    expect(store.markAccepted(deal.id, 'late')).toBe(false)
    expect(store.markPublished(deal.id, 5)).toBe(false)
    expect(store.markActive(deal.id)).toBe(false)
    const [audit] = store.audit(1)
    expect(audit).toMatchObject({ state: 'failed', reason: 'PROPOSAL_TIMEOUT' })
    expect(audit.proposalId).toBeUndefined()
    expect(audit.events.map((e) => e.state)).toEqual(['proposing', 'failed'])
    // Skipping a step is refused too: a proposal is not active before it is published.
    const other = fresh()
    expect(other.store.markActive(other.deal.id)).toBe(false)
  })

  it('fails the proposals a crash interrupted, once', () => {
    const { store, deal } = fresh()
    expect(store.failInterrupted()).toBe(1)
    expect(store.failInterrupted()).toBe(0)
    expect(store.get(deal.id)).toMatchObject({ state: 'failed', reason: 'INTERRUPTED' })
  })

  it('keeps what was sent and answered', () => {
    const { store, deal } = fresh()
    store.recordSent(deal.id, { signedProposal: new Uint8Array([1, 2, 3]), proposalCid: 'bafy2bzace…', answer: 'BUSY' })
    expect(store.audit()[0]).toMatchObject({ signedProposal: new Uint8Array([1, 2, 3]), proposalCid: 'bafy2bzace…', providerAnswer: 'BUSY' })
  })
})

import type { TickReport } from './deal-engine.ts'
import type { EngineContext } from './engine-context.ts'

/** Proposals the providers accepted: published (a chain deal id), failed, lost, or past their start. */
export async function followProposals(c: EngineContext, head: number, r: TickReport): Promise<void> {
  const { deals, providers } = c.o
  for (const d of await deals.inState('proposed')) {
    const s = await c.withTimeout((signal) => providers.proposalState(d.provider, d.proposalId!, { signal })).catch(() => undefined)
    if (s?.state === 'published') {
      if (await deals.markPublished(d.id, s.dealId)) r.published++
    } else if (s?.state === 'failed') await c.fail(d, s.reason, r)
    else if (s?.state === 'unknown') await c.fail(d, 'PROPOSAL_LOST', r)
    // Still transferring (or no answer) when the deal should already start: it never will.
    else if (head >= d.startEpoch) await c.fail(d, 'PROPOSAL_EXPIRED', r)
  }
}

/** Deals on chain: published → active when sealed; failed when never sealed; ended when slashed or expired. */
export async function followChain(c: EngineContext, head: number, r: TickReport): Promise<void> {
  const { deals, providers } = c.o
  // A published deal whose provider reports that sealing failed will never start: ask another provider now.
  for (const d of await deals.inState('published')) {
    if (!d.proposalId) continue
    const s = await c.withTimeout((signal) => providers.proposalState(d.provider, d.proposalId!, { signal })).catch(() => undefined)
    if (s?.state === 'failed') await c.fail(d, s.reason, r)
  }
  for (const d of [...(await deals.inState('published')), ...(await deals.inState('active'))]) {
    const chain = await providers.dealOnChain(d.dealId!, head).catch(() => undefined)
    if (chain === undefined) continue
    if (chain === null) {
      if (head >= d.startEpoch) await c.fail(d, 'NOT_ON_CHAIN', r)
      continue
    }
    if (chain.status === 'active' && d.state === 'published') {
      if (await deals.markActive(d.id)) r.activated++
    } else if (chain.status === 'published-expired') await c.fail(d, 'NOT_SEALED_IN_TIME', r)
    else if (chain.status === 'slashed') await deals.markEnded(d.id, 'SLASHED')
    else if (chain.status === 'expired') await deals.markEnded(d.id, 'EXPIRED')
  }
}

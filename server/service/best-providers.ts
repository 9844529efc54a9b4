import type { NetworkPort } from '../network/types.ts'
import type { AvailabilityChecker, DealRequest } from './availability.ts'
import type { DealStore } from './deal-store.ts'
import type { PolicyDocument } from './onboarding-policy.ts'
import type { Tenant } from './tenants.ts'

export type DiscoveryReason = 'ONBOARDING_IN_PROGRESS' | 'ONBOARDING_COMPLETED' | 'NO_PROVIDERS_AVAILABLE'
export const MAX_PROVIDERS = 3

export interface BestProviders {
  providers: string[]
  reason?: DiscoveryReason
}

export interface ProviderPicker {
  pick(tenant: Tenant, request: DealRequest, policy: PolicyDocument, blacklist: string[], head: number): Promise<BestProviders>
}

/**
 * Up to three available providers that move the piece towards the tenant's
 * onboarding policy: each group wants `numberOfCopies` copies on its own
 * providers, the mix group wants its copies anywhere else. Among equals the
 * provider recommended least often so far comes first, so load spreads.
 */
export function createProviderPicker(deps: { network: NetworkPort; deals: DealStore; availability: AvailabilityChecker }): ProviderPicker {
  const recommended = new Map<string, number>()

  return {
    async pick(tenant, request, policy, blacklist, head) {
      const banned = new Set(blacklist)
      const holders = request.pieceCid ? await deps.deals.pieceDeals(tenant.id, request.pieceCid) : []
      const active = new Set(holders.filter((d) => d.status === 'active').map((d) => d.provider))
      const pending = new Set(holders.filter((d) => d.status === 'published').map((d) => d.provider))
      const grouped = new Set(policy.groups.flatMap((g) => g.providers.map((p) => p.addressId)))

      // Which slots of the policy are still open, and which providers may fill them.
      const wanted: { candidates: string[]; missing: number; pendingCovers: boolean }[] = []
      let doneByActive = true
      for (const g of policy.groups) {
        const members = g.providers.map((p) => p.addressId).filter((p) => !banned.has(p))
        const have = members.filter((p) => active.has(p)).length
        const coming = members.filter((p) => pending.has(p)).length
        if (have < g.numberOfCopies) {
          doneByActive = false
          wanted.push({ candidates: members, missing: g.numberOfCopies - have - coming, pendingCovers: have + coming >= g.numberOfCopies })
        }
      }
      const all = await deps.network.listProviders()
      const mixMembers = all.filter((p) => !grouped.has(p) && !banned.has(p))
      const mixHave = mixMembers.filter((p) => active.has(p)).length
      const mixComing = mixMembers.filter((p) => pending.has(p)).length
      const mixCopies = policy.mixGroup.numberOfCopies
      if (mixHave < mixCopies) {
        doneByActive = false
        wanted.push({ candidates: mixMembers, missing: mixCopies - mixHave - mixComing, pendingCovers: mixHave + mixComing >= mixCopies })
      }

      if (request.pieceCid && doneByActive) return { providers: [], reason: 'ONBOARDING_COMPLETED' }
      const open = wanted.filter((w) => w.missing > 0)
      if (request.pieceCid && open.length === 0) return { providers: [], reason: 'ONBOARDING_IN_PROGRESS' }

      // Without a piece CID nothing is onboarded yet: any slot of the policy is open.
      const slots = request.pieceCid
        ? open
        : wanted.length > 0
          ? wanted
          : [{ candidates: mixMembers, missing: MAX_PROVIDERS, pendingCovers: false }]
      // `policy_respected` fills the groups in order; `number_of_copies` takes the copies wherever they come fastest.
      const ordered =
        policy.settings.priority === 'number_of_copies'
          ? [{ candidates: slots.flatMap((s) => s.candidates), missing: MAX_PROVIDERS }]
          : slots
      const chosen: string[] = []
      for (const slot of ordered) {
        const fair = [...new Set(slot.candidates)]
          .filter((p) => !active.has(p) && !pending.has(p) && !chosen.includes(p))
          .sort((a, b) => (recommended.get(a) ?? 0) - (recommended.get(b) ?? 0) || a.localeCompare(b))
        let taken = 0
        for (const p of fair) {
          if (chosen.length >= MAX_PROVIDERS || taken >= slot.missing) break
          if ((await deps.availability.check(tenant, p, request, head)).isAvailable) {
            chosen.push(p)
            taken++
          }
        }
        if (chosen.length >= MAX_PROVIDERS) break
      }
      for (const p of chosen) recommended.set(p, (recommended.get(p) ?? 0) + 1)
      if (chosen.length > 0) return { providers: chosen }
      return { providers: [], reason: 'NO_PROVIDERS_AVAILABLE' }
    },
  }
}

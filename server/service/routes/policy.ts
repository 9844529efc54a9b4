import { Router } from 'express'
import type { NetworkPort } from '../../network/types.ts'
import type { AddressNetwork } from '../../shared/address.ts'
import { currentTenant } from '../auth.ts'
import { badRequest } from '../errors.ts'
import { PolicyDocumentSchema, type PolicyStore } from '../onboarding-policy.ts'
import { EmptyBody } from '../schemas.ts'
import type { TenantStore } from '../tenants.ts'
import { parseBody } from '../validation.ts'

/**
 * Import merges by default: settings and the mix group are replaced, groups are
 * added (names and providers must be new to the tenant). `?mode=replace`
 * swaps the whole policy instead.
 */
export function createPolicyRouter(deps: {
  policies: PolicyStore
  tenants: TenantStore
  network: NetworkPort
  addressNetwork: AddressNetwork
}): Router {
  const router = Router()
  router.post('/private/v1/onboarding-policy/export', async (req, res) => {
    parseBody(req, EmptyBody, { optional: true })
    res.json({ error: null, result: await deps.policies.export(currentTenant(res).id) })
  })
  router.post('/private/v1/onboarding-policy/import', async (req, res) => {
    const mode = req.query.mode ?? 'merge'
    if (mode !== 'merge' && mode !== 'replace') throw badRequest('mode: must be merge or replace')
    const doc = parseBody(req, PolicyDocumentSchema)
    const tenant = currentTenant(res)
    await deps.policies.import(tenant.id, doc, {
      replace: mode === 'replace',
      blacklist: await deps.tenants.blacklist(tenant.id),
      network: deps.network,
      addressNetwork: deps.addressNetwork,
    })
    res.status(200).end()
  })
  return router
}

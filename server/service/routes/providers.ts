import { Router } from 'express'
import type { NetworkPort, TransferType } from '../../network/types.ts'
import { parseAddressOn, type AddressNetwork } from '../../shared/address.ts'
import { currentTenant } from '../auth.ts'
import type { AvailabilityChecker, DealRequest } from '../availability.ts'
import type { ProviderPicker } from '../best-providers.ts'
import { badRequest } from '../errors.ts'
import type { PolicyStore } from '../onboarding-policy.ts'
import { BestProvidersBody, DEFAULT_START_OFFSET, ProviderAvailabilityBody } from '../schemas.ts'
import type { TenantStore } from '../tenants.ts'
import { parseBody } from '../validation.ts'

interface Deps {
  network: NetworkPort
  tenants: TenantStore
  policies: PolicyStore
  availability: AvailabilityChecker
  picker: ProviderPicker
  addressNetwork: AddressNetwork
}

type Body = {
  pieceCid?: string
  startEpoch?: number
  startEpochHeadOffset?: number
  duration: number
  storagePricePerEpoch: string
  verifiedDeal: boolean
  transferSize: number
  transferType: string
  removeUnsealedCopy: boolean
}

function dealRequest(body: Body, head: number): DealRequest {
  return {
    pieceCid: body.pieceCid,
    startEpoch: body.startEpoch ?? head + (body.startEpochHeadOffset ?? DEFAULT_START_OFFSET),
    duration: body.duration,
    storagePricePerEpoch: BigInt(body.storagePricePerEpoch),
    verifiedDeal: body.verifiedDeal,
    transferSize: body.transferSize,
    transferType: body.transferType as TransferType,
    removeUnsealedCopy: body.removeUnsealedCopy,
  }
}

export function createProvidersRouter(deps: Deps): Router {
  const router = Router()
  router.post('/private/v1/get-provider-availability', async (req, res) => {
    const body = parseBody(req, ProviderAvailabilityBody)
    const parsed = parseAddressOn(body.providerAddressId, deps.addressNetwork)
    if (!parsed.ok) throw badRequest(`providerAddressId: ${parsed.reason}`)
    const head = (await deps.network.chainHead()).epoch
    const result = await deps.availability.check(currentTenant(res), body.providerAddressId, dealRequest(body, head), head)
    res.json({ error: null, result })
  })
  router.post('/private/v1/get-best-available-providers', async (req, res) => {
    const body = parseBody(req, BestProvidersBody)
    const tenant = currentTenant(res)
    const head = (await deps.network.chainHead()).epoch
    const [policy, blacklist] = await Promise.all([deps.policies.export(tenant.id), deps.tenants.blacklist(tenant.id)])
    const result = await deps.picker.pick(tenant, dealRequest(body, head), policy, blacklist, head)
    res.json({ error: null, result })
  })
  return router
}

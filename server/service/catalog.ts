import type { z } from 'zod'
import { ALL_PLANS, CLIENT_PLANS, PREMIUM_PLANS } from './auth.ts'
import * as S from './schemas.ts'
import type { Plan } from './tenants.ts'

/** Every endpoint once: used to gate plans and to write /openapi.json. */
export interface EndpointSpec {
  method: 'get' | 'post'
  path: string
  summary: string
  /** Unset: public. */
  plans?: readonly Plan[]
  body?: z.ZodType
  bodyRequired?: boolean
  response?: z.ZodType
  /** Extra 400 messages worth listing. */
  errorCodes?: readonly string[]
  paginated?: boolean
}

export const ENDPOINTS: readonly EndpointSpec[] = [
  {
    method: 'post',
    path: '/public/v1/ticker/get-latest',
    summary: 'Latest ticker of every exchange fetched in the last 2 minutes',
    response: S.TickerLatestResponse,
  },
  {
    method: 'post',
    path: '/public/v1/ticker/get-latest-by-pair',
    summary: 'Latest tickers of one pair and their volume-weighted price',
    body: S.TickerByPairBody,
    bodyRequired: true,
    response: S.TickerByPairResponse,
  },
  { method: 'get', path: '/public/v1/get-version', summary: 'API version', response: S.VersionResponse },
  {
    method: 'post',
    path: '/private/v1/get-on-chain-deals',
    summary: "The tenant's on-chain deals, 10 000 per page",
    plans: CLIENT_PLANS,
    body: S.OnChainDealsBody,
    response: S.OnChainDealsResponse,
    paginated: true,
  },
  {
    method: 'post',
    path: '/private/v1/get-best-available-providers',
    summary: 'Up to 3 providers available for a deal, following the onboarding policy',
    plans: CLIENT_PLANS,
    body: S.BestProvidersBody,
    bodyRequired: true,
    response: S.BestProvidersResponse,
  },
  {
    method: 'post',
    path: '/private/v1/get-provider-availability',
    summary: 'Whether one provider can accept a deal',
    plans: CLIENT_PLANS,
    body: S.ProviderAvailabilityBody,
    bodyRequired: true,
    response: S.ProviderAvailabilityResponse,
  },
  {
    method: 'post',
    path: '/private/v1/get-network-epoch-duration-from-days',
    summary: 'Days to epochs (2880 per day)',
    plans: ALL_PLANS,
    body: S.EpochDurationBody,
    bodyRequired: true,
    response: S.IntegerResult,
  },
  {
    method: 'post',
    path: '/private/v1/get-network-epoch-from-unix-timestamp',
    summary: 'Unix time in milliseconds to the epoch running then',
    plans: ALL_PLANS,
    body: S.EpochFromTimestampBody,
    bodyRequired: true,
    response: S.IntegerResult,
  },
  {
    method: 'post',
    path: '/private/v1/onboarding-policy/export',
    summary: "The tenant's onboarding policy",
    plans: PREMIUM_PLANS,
    response: S.PolicyExportResponse,
  },
  {
    method: 'post',
    path: '/private/v1/onboarding-policy/import',
    summary: 'Imports an onboarding policy, all or nothing (query mode=merge|replace, default merge)',
    plans: PREMIUM_PLANS,
    body: S.PolicyDocumentSchema,
    bodyRequired: true,
    errorCodes: S.ImportCodes.options,
  },
]

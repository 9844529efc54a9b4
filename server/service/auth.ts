import type { RequestHandler, Response } from 'express'
import { forbidden, unauthorized } from './errors.ts'
import { PLAN_LABELS, type Plan, type Tenant, type TenantStore } from './tenants.ts'

/** Plans per endpoint, as the spec lists them. */
export const CLIENT_PLANS: readonly Plan[] = ['clients-free', 'clients-premium']
export const ALL_PLANS: readonly Plan[] = ['clients-free', 'clients-premium', 'providers-free']
export const PREMIUM_PLANS: readonly Plan[] = ['clients-premium']

/** 401 without or with an unknown X-API-KEY; puts the tenant in `res.locals.tenant`. */
export function requireApiKey(tenants: TenantStore): RequestHandler {
  return async (req, res, next) => {
    const key = req.get('x-api-key')
    const tenant = key ? await tenants.byKey(key.trim()) : undefined
    if (!tenant) return next(unauthorized())
    res.locals.tenant = tenant
    next()
  }
}

/** 403 when the tenant's plan is not among `plans`. */
export function requirePlan(plans: readonly Plan[]): RequestHandler {
  return (_req, res, next) => {
    const tenant = currentTenant(res)
    next(plans.includes(tenant.plan) ? undefined : forbidden(PLAN_LABELS[tenant.plan]))
  }
}

export function currentTenant(res: Response): Tenant {
  return res.locals.tenant as Tenant
}

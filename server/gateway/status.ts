import express, { Router, type NextFunction, type Request, type Response } from 'express'
import { formatUnits } from 'viem'
import type { NetworkName } from '../shared/contracts/network.ts'
import {
  GatewayStatusRequestSchema,
  type GatewayRoutePlan,
  type GatewayStatus,
  type GatewayStatusResponse,
} from '../shared/contracts/gateway-status.ts'
import { fromAtto } from '../shared/deal-price.ts'
import { describeIssues } from '../shared/contracts/zod-issues.ts'
import type { RouteStanding } from './deals/index.ts'
import { badRequest } from './errors.ts'

/** What `POST /status` says, asked afresh on every request. */
export interface StatusSource {
  /** The network the gateway's deals are on. */
  network?: NetworkName
  /** What pays for each storage route's copies; undefined without a deal engine. */
  standing(): RouteStanding | undefined
}

export const STATUS_PATH = '/status'

/** Latest time an ISO 8601 string says with a four-digit year. */
const MAX_ISO_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/** A wall-clock time as ISO 8601, held between 1970 and the year 9999 (a runway of "for ever" says 9999). */
const isoTime = (ms: number) => new Date(Number.isNaN(ms) ? 0 : Math.min(Math.max(ms, 0), MAX_ISO_MS)).toISOString()

/** The status as its contract says it, from what the routes say now. */
export function gatewayStatus(source: StatusSource): GatewayStatus {
  const standing = source.standing()
  const market = standing?.market
  const funds = market?.funds
  const pdp = standing?.onchainCloud
  const kind = market?.kind
  const nextGroup = plansOf(standing)
  return {
    ...(source.network ? { network: source.network } : {}),
    deals: {
      blocked: market?.blocked !== undefined,
      ...(market?.blocked !== undefined ? { blockedReason: market.blocked } : {}),
      ...(kind
        ? {
            kind: {
              verified: kind.verified,
              ...(kind.networkVersion !== undefined ? { networkVersion: kind.networkVersion } : {}),
              ...(kind.note ? { note: kind.note } : {}),
            },
          }
        : {}),
    },
    routes: {
      ...(funds
        ? {
            market: {
              dataCap: funds.dataCap === null ? null : funds.dataCap.toString(),
              escrow: formatUnits(funds.escrow, 18),
              locked: formatUnits(funds.locked, 18),
              ...(funds.dealsUntilMs !== undefined ? { dealsUntil: isoTime(funds.dealsUntilMs) } : {}),
            },
          }
        : {}),
      ...(pdp
        ? {
            onchainCloud: {
              status: pdp.status,
              funds: formatUnits(pdp.funds, 18),
              fundedUntil: isoTime(pdp.fundedUntilMs),
              ...(pdp.fundedDays !== undefined && Number.isFinite(pdp.fundedDays)
                ? { fundedDays: Math.round(pdp.fundedDays * 100) / 100 }
                : {}),
            },
          }
        : {}),
    },
    ...(nextGroup.length > 0 ? { nextGroup } : {}),
  }
}

/** Each route's plan for the next group: the market's (with its price in FIL, and USD when known), then PDP's. */
function plansOf(standing: RouteStanding | undefined): GatewayRoutePlan[] {
  const plans: GatewayRoutePlan[] = []
  const market = standing?.market?.plan
  if (standing?.marketOff !== undefined) plans.push({ route: 'market', copies: 0, why: standing.marketOff })
  else if (market) {
    const max = market.copies > 0 ? market.maxPerTiBMonth : undefined
    plans.push({
      route: 'market',
      copies: market.copies,
      ...(max === undefined ? {} : { maxPricePerTiBMonth: fromAtto(max) }),
      ...(max === undefined || market.filUsd === undefined
        ? {}
        : { maxPricePerTiBMonthUsd: ((Number(max) / 1e18) * market.filUsd).toFixed(2) }),
      why: market.why,
    })
  }
  if (standing?.pdpPlan) plans.push({ route: 'onchainCloud', ...standing.pdpPlan })
  return plans
}

/**
 * `POST /status`, body `{}` or none → `{ success: true, result: <GatewayStatus> }`,
 * for the admin's link test. A POST, as the gateway's other questions are
 * (`/file-info`, `/folder-states`): no WebDAV method is a POST, so no name
 * in anyone's files is taken from them. An unknown field is a 400.
 */
export function createStatusRouter(source: StatusSource): Router {
  const router = Router({ caseSensitive: true, strict: true })
  // Any content type is read as JSON, as /file-info does; an empty body is `{}`.
  const parseJson = express.json({ limit: '1kb', strict: true, type: () => true })

  router.post(STATUS_PATH, parseJson, (req: Request, res: Response, next: NextFunction) => {
    const body = GatewayStatusRequestSchema.safeParse(req.body ?? {})
    if (!body.success) return next(badRequest(describeIssues(body.error.issues)))
    let answer: GatewayStatusResponse
    try {
      answer = { success: true, result: gatewayStatus(source) }
    } catch (err) {
      return next(err)
    }
    res.status(200).set('Cache-Control', 'no-store').json(answer)
  })
  return router
}

import { Router, type NextFunction, type Request, type Response } from 'express'
import { formatUnits } from 'viem'
import type { NetworkName } from '../shared/contracts/network.ts'
import { GatewayStatusQuerySchema, type GatewayStatus, type GatewayStatusResponse } from '../shared/contracts/gateway-status.ts'
import type { DealKind, MarketFunding, PdpFunding } from './deals/types.ts'
import { badRequest, methodNotAllowed } from './errors.ts'

/** What `GET /status` says, asked afresh on every request; every part may be absent (no deal engine, a route not used). */
export interface StatusSource {
  /** The network the gateway's deals are on. */
  network?: NetworkName
  /** Why no deals are proposed right now (no DataCap, no escrow); undefined while they can be, or without a deal engine. */
  dealsBlocked(): string | undefined
  /** Which deals are proposed now; undefined without a deal engine. */
  dealKind(): DealKind | undefined
  /** The Onchain Cloud account's standing; undefined without PDP copies or before it is first read. */
  onchainCloud(): PdpFunding | undefined
  /** The deal market's funds; undefined without deal-market copies or before they are first read. */
  dealMarket(): MarketFunding | undefined
}

export const STATUS_PATH = '/status'

/** Methods refused on the path; the WebDAV ones (PROPFIND, MKCOL…) still reach a collection of that name. */
const REFUSED_METHODS = ['post', 'put', 'patch', 'delete'] as const

/** Latest time an ISO 8601 string says with a four-digit year. */
const MAX_ISO_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/** A wall-clock time as ISO 8601, held between 1970 and the year 9999 (a runway of "for ever" says 9999). */
const isoTime = (ms: number) => new Date(Number.isNaN(ms) ? 0 : Math.min(Math.max(ms, 0), MAX_ISO_MS)).toISOString()

/** The status as its contract says it, from what the source says now. */
export function gatewayStatus(source: StatusSource): GatewayStatus {
  const blocked = source.dealsBlocked()
  const kind = source.dealKind()
  const pdp = source.onchainCloud()
  const market = source.dealMarket()
  return {
    ...(source.network ? { network: source.network } : {}),
    deals: {
      blocked: blocked !== undefined,
      ...(blocked !== undefined ? { blockedReason: blocked } : {}),
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
      ...(market
        ? {
            market: {
              dataCap: market.dataCap === null ? null : market.dataCap.toString(),
              escrow: formatUnits(market.escrow, 18),
              locked: formatUnits(market.locked, 18),
              ...(market.dealsUntilMs !== undefined ? { dealsUntil: isoTime(market.dealsUntilMs) } : {}),
            },
          }
        : {}),
      ...(pdp ? { onchainCloud: { status: pdp.status, funds: formatUnits(pdp.funds, 18), fundedUntil: isoTime(pdp.fundedUntilMs) } } : {}),
    },
  }
}

/** True when a request carries a body: a length above 0, or a chunked one. */
const hasBody = (req: Request) => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0

/**
 * `GET /status` → `{ success: true, result: <GatewayStatus> }`, for the
 * admin's link test. Only the exact path: `/status/` and `/Status` stay
 * WebDAV paths. A body or a query parameter is a 400, and POST, PUT, PATCH
 * and DELETE a 405, in the gateway's envelope; WebDAV's own methods
 * (PROPFIND, MKCOL…) still reach a collection named `status`.
 */
export function createStatusRouter(source: StatusSource): Router {
  const router = Router({ caseSensitive: true, strict: true })

  router.get(STATUS_PATH, (req: Request, res: Response, next: NextFunction) => {
    if (hasBody(req)) return next(badRequest('GET /status takes no body'))
    const query = GatewayStatusQuerySchema.safeParse(req.query)
    if (!query.success) {
      const keys = Object.keys(req.query as object)
      const named = keys
        .slice(0, 5)
        .map((k) => JSON.stringify(k.slice(0, 40)))
        .join(', ')
      return next(badRequest(`GET /status takes no query parameters: ${named}${keys.length > 5 ? ', …' : ''}`))
    }
    let answer: GatewayStatusResponse
    try {
      answer = { success: true, result: gatewayStatus(source) }
    } catch (err) {
      return next(err)
    }
    res.status(200).set('Cache-Control', 'no-store').json(answer)
  })

  for (const method of REFUSED_METHODS) {
    router[method](STATUS_PATH, (req: Request, _res: Response, next: NextFunction) =>
      next(methodNotAllowed(req.method, STATUS_PATH, ['GET', 'HEAD'])),
    )
  }
  return router
}

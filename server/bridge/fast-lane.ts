import type { Express } from 'express'
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import proxyaddr from 'proxy-addr'
import type { Logger } from '../shared/logger.ts'
import { logWhenDone } from '../shared/request-log.ts'
import { sendBridgeError } from './errors.ts'
import { checkIdentityHeaders } from './identity-headers.ts'
import type { Caller } from './auth/caller.ts'

/** What the fast lane knows of a request beyond node's own objects. */
export interface RequestContext {
  /** The client's address, after the trusted proxies. */
  address: string
  /** Set once authentication succeeded, for the request log. */
  caller?: Caller
}

/** A `POST` route served on node's own request and response; failures are thrown as BridgeErrors for the one error writer. */
export type BridgeRoute = (req: IncomingMessage, res: ServerResponse, ctx: RequestContext) => Promise<void>

/**
 * The bridge's request listener. Every open Files sidebar polls the metadata
 * route, and Express costs about 150 µs of CPU per request before a route
 * runs (its per-request prototype swap and router: measured on this machine
 * as a bare Express app against a plain node handler doing the same proxying;
 * the bridge went from about 530 to 270 µs per request in
 * `npm run bench -- --only metadata`).
 * So exactly `POST <route>` for the polled routes (the metadata record, and
 * the Files list's folder states) skips Express and gets the steps Express applies
 * to every other request here: the request log, the identity-header refusal,
 * the client address under `trust proxy`, and the one error writer.
 * Everything else goes to the Express app.
 */
export function createBridgeListener(app: Express, routes: ReadonlyMap<string, BridgeRoute>, logger: Logger): RequestListener {
  // Express's own compiled `trust proxy` setting, so both lanes see the same client address.
  const trust = app.get('trust proxy fn') as (address: string, hop: number) => boolean
  return (req, res) => {
    const route = req.method === 'POST' ? routes.get(pathOf(req.url)) : undefined
    if (!route) return void app(req, res)
    const ctx: RequestContext = { address: proxyaddr(req, trust) }
    logWhenDone(logger, req, res, () => ({ user: ctx.caller?.user.id }))
    // Failures answer in the app's `{ success: false, error }` envelope: the error writer's default surface.
    try {
      checkIdentityHeaders(req.headers, ctx.address, logger)
      route(req, res, ctx).catch((err: unknown) => sendBridgeError(logger, err, req, res))
    } catch (err) {
      sendBridgeError(logger, err, req, res)
    }
  }
}

function pathOf(url = ''): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

import type { Request, RequestHandler, Response } from 'express'
import { isConstraintViolation, type Sql } from '../../shared/sql/index.ts'
import { isDiskFull } from '../../shared/disk.ts'
import type { Logger } from '../../shared/logger.ts'
import { loggedUrl } from '../../shared/request-log.ts'
import { GatewayError } from '../errors.ts'
import type { Namespace } from '../namespace.ts'
import type { ContentSource, DavContext, MethodHandler } from './context.ts'
import { createDeadProps } from './dead-props.ts'
import { DavError, insufficientStorage, sendDavError } from './errors.ts'
import { createLockStore } from './locks.ts'
import { copy, move } from './methods/copy-move.ts'
import { remove } from './methods/delete.ts'
import { get } from './methods/get.ts'
import { lock } from './methods/lock.ts'
import { mkcol } from './methods/mkcol.ts'
import { ALLOW, options } from './methods/options.ts'
import { propfind } from './methods/propfind.ts'
import { proppatch } from './methods/proppatch.ts'
import { put } from './methods/put.ts'
import { unlock } from './methods/unlock.ts'
import { migrateWebDav } from './schema.ts'

export type { ContentSource } from './context.ts'
export { DAV, GW } from './xml.ts'

export interface WebDavOptions {
  namespace: Namespace
  content: ContentSource
  /** The store the namespace lives in; dead properties and locks go beside it. */
  sql: Sql
  logger: Logger
  /** Why an upload of so many bytes must be refused to keep room for sealing (507); undefined when it fits. */
  uploadRefusal?: (bytes?: number) => Promise<string | undefined>
  /** Gives up the room held for deletes, so that a DELETE on a full disk can be written. */
  releaseRoomForDeletes?: () => Promise<boolean>
}

const METHODS: Record<string, MethodHandler> = {
  OPTIONS: options,
  GET: get,
  HEAD: get,
  PUT: put,
  DELETE: remove,
  MKCOL: mkcol,
  PROPFIND: propfind,
  PROPPATCH: proppatch,
  COPY: copy,
  MOVE: move,
  LOCK: lock,
  UNLOCK: unlock,
}

/**
 * The gateway's WebDAV server (RFC 4918 class 1 and 2) over its namespace
 * and content store, serving every path it is mounted on.
 *
 * @example app.use(await createWebDav({ namespace, content, sql, logger }))
 */
export async function createWebDav(options: WebDavOptions): Promise<RequestHandler> {
  await migrateWebDav(options.sql)
  const { namespace } = options
  const ctx: DavContext = {
    namespace,
    content: options.content,
    props: createDeadProps(options.sql),
    locks: createLockStore(options.sql),
    logger: options.logger.child({ part: 'webdav' }),
    uploadRefusal: options.uploadRefusal,
    releaseRoomForDeletes: options.releaseRoomForDeletes,
    atomically: (fn) =>
      namespace.transaction((tx) => fn({ namespace: namespace.within(tx), props: createDeadProps(tx), locks: createLockStore(tx) })),
  }

  return (req, res) => {
    const handler = METHODS[req.method]
    if (!handler) {
      sendDavError(res, new DavError(405, 'METHOD_NOT_ALLOWED', `${req.method} is not supported here`, undefined, { Allow: ALLOW }), false)
      return
    }
    handler(req, res, ctx).catch((err: unknown) => fail(req, res, ctx, err))
  }
}

/** The one place a failed request becomes a response (or, mid-stream, a cut connection). */
function fail(req: Request, res: Response, ctx: DavContext, err: unknown): void {
  const clientGone = req.destroyed && !req.complete
  if (res.headersSent || clientGone || res.destroyed) {
    if (!clientGone) ctx.logger.warn({ err, method: req.method, url: loggedUrl(req) }, 'WebDAV response failed mid-way')
    res.destroy()
    return
  }
  const head = req.method === 'HEAD'
  // Headers meant for a success (Content-Length of a file, ETag) must not describe the error.
  for (const name of res.getHeaderNames()) res.removeHeader(name)
  if (err instanceof GatewayError) {
    sendDavError(res, err, head)
    return
  }
  if (isDiskFull(err)) {
    // As Apache mod_dav and sabre/dav answer; nothing of the request was named in the namespace.
    ctx.logger.warn({ method: req.method, url: loggedUrl(req) }, 'disk full: request refused with 507')
    sendDavError(res, insufficientStorage(!['GET', 'HEAD', 'PROPFIND', 'OPTIONS'].includes(req.method)), head)
    return
  }
  if (isConstraintViolation(err)) {
    // Two requests raced to create the same path; the loser gets a clean conflict.
    sendDavError(res, new DavError(409, 'CONFLICT', 'The resource changed during the request'), head)
    return
  }
  ctx.logger.error({ err, method: req.method, url: loggedUrl(req) }, 'unexpected WebDAV error')
  sendDavError(res, new DavError(500, 'INTERNAL', 'Internal gateway error'), head)
}

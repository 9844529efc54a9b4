import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { handleAdditionStatus, handleAddPieces, handleCreateAndAdd } from './pdp-provider-add-pieces.ts'
import { ChainSendError } from './pdp-provider-chain.ts'
import {
  handleCreateDataSet,
  handleCreationStatus,
  handleDeletePiece,
  handleGetDataSet,
  handleGetPiece,
  type DataSetContext,
} from './pdp-provider-data-sets.ts'
import { goError, HttpFail, serverError } from './pdp-provider-http.ts'
import { handlePull, type PullContext } from './pdp-provider-pull.ts'
import { serveIpfs, servePiece, type RetrievalContext } from './pdp-provider-retrieval.ts'
import {
  handleFindPiece,
  handlePiecePost,
  handlePieceUpload,
  handleFinalizeStreamingUpload,
  handleStreamingUpload,
  handleStreamingUploadUrl,
  type UploadContext,
} from './pdp-provider-uploads.ts'

/** What the routes hand on to the handlers, and the one fault they answer themselves. */
export interface RouteContext extends UploadContext, DataSetContext, PullContext, RetrievalContext {
  /** True while the provider answers every write and ping 503 (the `refuse` fault). */
  refusing(): boolean
}

const WRITES = new Set(['POST', 'PUT', 'DELETE'])

function handlePing(ctx: RouteContext, res: ServerResponse): void {
  if (ctx.refusing()) return serverError(res, 503, 'Service Unavailable')
  res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' })
  res.end('curio-pdp')
}

/** Routing (Curio pdp/handlers.go Routes, market/retrieval Router). */
async function route(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost')
  const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname
  const method = req.method ?? 'GET'
  const parts = path.split('/').slice(1)
  if (parts[0] === 'piece' && parts.length === 2 && (method === 'GET' || method === 'HEAD')) return servePiece(ctx, req, res, parts[1])
  if (parts[0] === 'ipfs' && parts.length >= 2 && (method === 'GET' || method === 'HEAD')) return serveIpfs(ctx, req, res, url)
  if (parts[0] !== 'pdp') return goError(res, 404, '404 page not found')
  if (ctx.refusing() && WRITES.has(method)) return serverError(res, 503, 'Service Unavailable')
  const allow = (...methods: string[]) => {
    if (methods.includes(method)) return true
    res.writeHead(405, { Allow: methods.join(', ') }).end()
    return false
  }
  const [, a, b, c, d, e] = parts
  if (a === 'ping' && parts.length === 2) return allow('GET') ? handlePing(ctx, res) : undefined
  if (a === 'piece') {
    if (parts.length === 2) {
      if (method === 'POST') return handlePiecePost(ctx, req, res)
      return allow('GET', 'POST') ? handleFindPiece(ctx, res, url) : undefined
    }
    if (b === 'upload' && parts.length === 4) return allow('PUT') ? handlePieceUpload(ctx, req, res, c) : undefined
    if (b === 'uploads' && parts.length === 3) return allow('POST') ? handleStreamingUploadUrl(ctx, res) : undefined
    if (b === 'uploads' && parts.length === 4) {
      if (method === 'PUT') return handleStreamingUpload(ctx, req, res, c)
      return allow('PUT', 'POST') ? handleFinalizeStreamingUpload(ctx, req, res, c) : undefined
    }
    if (b === 'pull' && parts.length === 3) return allow('POST') ? handlePull(ctx, req, res) : undefined
  }
  if (a === 'data-sets') {
    if (parts.length === 2) return allow('POST') ? handleCreateDataSet(ctx, req, res) : undefined
    if (b === 'create-and-add' && parts.length === 3) return allow('POST') ? handleCreateAndAdd(ctx, req, res) : undefined
    if (b === 'created' && parts.length === 4) return allow('GET') ? handleCreationStatus(ctx, res, c) : undefined
    if (parts.length === 3) return allow('GET') ? handleGetDataSet(ctx, res, b) : undefined
    if (c === 'pieces' && parts.length === 4) return allow('POST') ? handleAddPieces(ctx, req, res, b) : undefined
    if (c === 'pieces' && d === 'added' && parts.length === 6) return allow('GET') ? handleAdditionStatus(ctx, res, b, e) : undefined
    if (c === 'pieces' && parts.length === 5) {
      if (method === 'DELETE') return handleDeletePiece(ctx, req, res, b, d)
      return allow('GET', 'DELETE') ? handleGetPiece(ctx, res, b, d) : undefined
    }
  }
  goError(res, 404, '404 page not found')
}

/**
 * The PDP API and retrieval as one request listener. A handler's failure
 * becomes Curio's answer to it: an HttpFail its own status and text, a
 * chain's refusal its text, anything else a 500 with an error id.
 */
export function createPdpRoutes(ctx: RouteContext): RequestListener {
  return (req, res) => {
    route(ctx, req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy()
      if (err instanceof HttpFail) {
        if (err.status >= 500) ctx.log.warn({ err: err.cause ?? err, url: req.url }, `simulated Curio: ${err.message}`)
        if (err.cause instanceof ChainSendError) return serverError(res, err.status, err.message, err.cause)
        return err.withEid ? serverError(res, err.status, err.message) : goError(res, err.status, err.message)
      }
      ctx.log.error({ err, url: req.url }, 'simulated Curio: handler failed')
      serverError(res, 500, 'Internal server error')
    })
  }
}

import type { ServerResponse } from 'node:http'

/**
 * Writes an answer in one piece, headers and body in one write, without
 * Express's `res.send` work (ETag, freshness, content negotiation) that API
 * answers never need. Headers set before (`setHeader`) are kept.
 */
export function sendText(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  sendText(res, status, 'application/json; charset=utf-8', JSON.stringify(value))
}

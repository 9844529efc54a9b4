import type { Request } from 'express'
import { badXml, tooLarge } from './errors.ts'
import { parseXml, XmlError, type XmlElement } from './xml.ts'

/** XML request bodies (PROPFIND, PROPPATCH, LOCK) are small; anything bigger is refused. */
export const MAX_XML_BYTES = 1024 * 1024

/** A body that sends nothing for this long is given up on (the connection is cut). */
export const STALL_MS = 60_000

/**
 * Cuts the request when its body stalls, so a silent client cannot keep a
 * request (and an ingest) open forever. The reader calls `touch()` on every
 * chunk (a passive 'data' listener would switch the stream to flowing mode
 * and lose chunks) and `stop()` when done.
 */
export function stallGuard(req: Request, ms = STALL_MS): { touch(): void; stop(): void } {
  const onStall = () => req.destroy(new Error('request body stalled'))
  let timer = setTimeout(onStall, ms)
  return {
    touch() {
      clearTimeout(timer)
      timer = setTimeout(onStall, ms)
    },
    stop: () => clearTimeout(timer),
  }
}

/** True when the request announces a body (a length above 0, or chunked). */
export function hasBody(req: Request): boolean {
  const length = req.headers['content-length']
  if (length !== undefined) return Number(length) > 0
  return req.headers['transfer-encoding'] !== undefined
}

/** Reads and parses an XML body; `undefined` when there is none. 413 past 1 MiB, 400 when malformed. */
export async function readXml(req: Request): Promise<XmlElement | undefined> {
  if (!hasBody(req)) return undefined
  if (Number(req.headers['content-length'] ?? 0) > MAX_XML_BYTES) throw tooLarge(`XML bodies are limited to ${MAX_XML_BYTES} bytes`)
  const bytes = await readLimited(req, MAX_XML_BYTES)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw badXml('XML body is not valid UTF-8')
  }
  if (text.trim() === '') return undefined
  try {
    return parseXml(text)
  } catch (err) {
    if (err instanceof XmlError) throw badXml(err.message)
    throw err
  }
}

/**
 * Collects a body up to `limit` bytes. Past it, rejects with 413 but keeps
 * reading (and dropping) the rest, so the client can still read our answer on
 * the same connection instead of seeing a reset.
 */
function readLimited(req: Request, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let total = 0
    const stall = stallGuard(req)
    req.on('data', (chunk: Buffer) => {
      stall.touch()
      total += chunk.length
      if (total > limit) {
        chunks.length = 0
        reject(tooLarge(`XML bodies are limited to ${limit} bytes`)) // later calls are no-ops
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => {
      stall.stop()
      resolve(Buffer.concat(chunks))
    })
    req.on('error', (err) => {
      stall.stop()
      reject(err)
    })
    req.on('close', () => {
      stall.stop()
      if (!req.complete) reject(new Error('request body aborted'))
    })
  })
}

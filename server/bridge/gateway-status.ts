import { GatewayStatusResponseSchema, type GatewayStatus } from '../shared/contracts/gateway-status.ts'
import type { EffectiveLink } from './settings-store.ts'

/** The most of a gateway's answer the bridge reads: its questions have short answers. */
const MAX_BODY_BYTES = 64 * 1024

/** What every question to the linked gateway carries: JSON, and the link's account when it has one. */
export function gatewayHeaders(link: EffectiveLink): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (link.user !== undefined && link.password !== undefined) {
    headers.authorization = 'Basic ' + Buffer.from(`${link.user}:${link.password}`).toString('base64')
  }
  return headers
}

/** The body up to MAX_BODY_BYTES; `whole` is false when there was more. */
export async function readCapped(res: Response): Promise<{ text: string; whole: boolean }> {
  if (!res.body) return { text: '', whole: true }
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > MAX_BODY_BYTES) {
      await reader.cancel()
      return { text: Buffer.concat(chunks).toString('utf8'), whole: false }
    }
    chunks.push(value)
  }
  return { text: Buffer.concat(chunks).toString('utf8'), whole: true }
}

/**
 * The linked gateway's `POST /status`: its result; null when it answered
 * something else (no such route, as CIDgravity's, an answer too large or not
 * the contract's); undefined when it could not be reached. Never throws.
 */
export async function askGatewayStatus(link: EffectiveLink, headers = gatewayHeaders(link)): Promise<GatewayStatus | null | undefined> {
  if (!link.url) return null
  try {
    const res = await fetch(`${link.url.replace(/\/+$/, '')}/status`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{}',
      redirect: 'manual',
      signal: AbortSignal.timeout(link.timeoutMs),
    })
    if (res.status !== 200) {
      await res.body?.cancel()
      return null
    }
    const { text, whole } = await readCapped(res)
    if (!text || !whole) return null
    const parsed = GatewayStatusResponseSchema.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data.result : null
  } catch (err) {
    // Not JSON is an answer; no answer at all is not.
    return err instanceof SyntaxError ? null : undefined
  }
}

import type { LinkTestResult } from '../shared/contracts/admin-settings.ts'
import type { EffectiveLink } from './settings-store.ts'

// A path nobody stores: a cheap question every gateway answers with "not found"
// (asking about `/` would make a real gateway aggregate its whole tree).
const PROBE_PATH = '/.gateway-link-test'
const MAX_BODY_BYTES = 64 * 1024

/**
 * Asks the gateway `POST /file-info` for a probe path with the link's
 * credentials and says what came back. Never throws: every outcome is a result.
 */
export async function testGatewayLink(link: EffectiveLink): Promise<LinkTestResult> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  if (!link.url) return { success: false, status: 0, message: 'No gateway URL is configured', latencyMs: 0 }
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (link.user !== undefined && link.password !== undefined) {
    headers.authorization = 'Basic ' + Buffer.from(`${link.user}:${link.password}`).toString('base64')
  }
  let res: Response
  let text: string
  try {
    res = await fetch(`${link.url.replace(/\/+$/, '')}/file-info`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ filePath: PROBE_PATH }),
      redirect: 'manual',
      signal: AbortSignal.timeout(link.timeoutMs),
    })
    text = await readCapped(res)
  } catch (err) {
    const name = (err as { name?: string }).name
    if (name === 'TimeoutError' || name === 'AbortError') {
      return { success: false, status: 0, message: `No answer within ${link.timeoutMs} ms`, latencyMs: elapsed() }
    }
    return { success: false, status: 0, message: `Could not connect: ${connectProblem(err)}`, latencyMs: elapsed() }
  }
  const latencyMs = elapsed()
  const status = res.status
  if (status === 401 || status === 403) return { success: false, status, message: 'The gateway refused the credentials', latencyMs }
  if (status >= 300 && status < 400)
    return {
      success: false,
      status,
      message: `The gateway redirects to ${res.headers.get('location') ?? 'another address'}; use that address`,
      latencyMs,
    }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return { success: false, status, message: `Not a gateway: POST /file-info answered ${status} with a body that is not JSON`, latencyMs }
  }
  const envelope = typeof body === 'object' && body !== null && typeof (body as { success?: unknown }).success === 'boolean'
  if (!envelope || (status !== 200 && status !== 404)) {
    return { success: false, status, message: `Not a gateway: POST /file-info answered ${status} without a file-info envelope`, latencyMs }
  }
  // A gateway that says which network it serves is checked against the settings; one that does not is trusted.
  const served = res.headers.get('filecoin-network')
  const warning =
    served && served !== link.network
      ? `The gateway serves the ${served} network, but these settings say ${link.network}: dates and explorer links would be wrong`
      : undefined
  const blocked = res.headers.get('filecoin-deals-blocked')
  const kind = res.headers.get('filecoin-deal-kind')
  const onchainCloud = onchainCloudOf(res.headers.get('filecoin-onchain-cloud'))
  const dealMarket = dealMarketOf(res.headers.get('filecoin-deal-market'))
  return {
    success: true,
    status,
    message: 'The gateway answered and accepted the credentials',
    latencyMs,
    ...(warning ? { warning } : {}),
    ...(blocked ? { dealsWarning: `The gateway proposes no deals: ${blocked.slice(0, 500)}` } : {}),
    ...(kind ? { dealKind: `The gateway proposes ${kind.slice(0, 500)}` } : {}),
    ...(onchainCloud ? { onchainCloud } : {}),
    ...(dealMarket ? { dealMarket } : {}),
  }
}

/** `a=1; b=2` as its fields. */
const headerFields = (header: string) => Object.fromEntries(header.split(';').map((part) => part.trim().split('=', 2) as [string, string]))
const DECIMAL = /^\d{1,30}(\.\d{1,18})?$/

/** `status=WARNING; funds=12.5; funded-until=2027-03-03T10:00:00.000Z`, read strictly: anything odd is left out. */
function onchainCloudOf(header: string | null): LinkTestResult['onchainCloud'] {
  if (!header) return undefined
  const fields = headerFields(header)
  const status = fields.status
  if (status !== 'HEALTHY' && status !== 'WARNING' && status !== 'DEFICIT') return undefined
  if (!DECIMAL.test(fields.funds ?? '') || Number.isNaN(Date.parse(fields['funded-until'] ?? ''))) return undefined
  return { status, funds: fields.funds, fundedUntil: new Date(fields['funded-until']).toISOString() }
}

/** `datacap=34359738368; escrow=0.5; locked=0.1; deals-until=2028-03-03T10:00:00.000Z`, read as strictly. */
function dealMarketOf(header: string | null): LinkTestResult['dealMarket'] {
  if (!header) return undefined
  const fields = headerFields(header)
  const dataCap = fields.datacap === 'none' ? null : fields.datacap
  if ((dataCap !== null && !/^\d{1,30}$/.test(dataCap ?? '')) || !DECIMAL.test(fields.escrow ?? '') || !DECIMAL.test(fields.locked ?? ''))
    return undefined
  const until = fields['deals-until']
  if (until !== undefined && Number.isNaN(Date.parse(until))) return undefined
  return {
    dataCap,
    escrow: fields.escrow,
    locked: fields.locked,
    ...(until === undefined ? {} : { dealsUntil: new Date(until).toISOString() }),
  }
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > MAX_BODY_BYTES) {
      await reader.cancel()
      break
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** undici hides the reason in `cause` (ECONNREFUSED, ENOTFOUND, certificate errors...). */
function connectProblem(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : 'unknown error')
}

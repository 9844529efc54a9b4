import { setTimeout as sleep } from 'node:timers/promises'
import { NetworkError, protocolError, timedOut } from '../errors.ts'

export interface JsonRpcOptions {
  url: string
  token?: string
  timeoutMs?: number
  fetch?: typeof fetch
  /**
   * A call a busy node refused (BUSY: it was not made) is sent again up to `retries` times, after a
   * wait that doubles from `firstMs` up to `maxMs`, or as long as the node's Retry-After says (within `maxMs`).
   */
  busyRetry?: { retries: number; firstMs: number; maxMs: number }
}

export type JsonRpcCall = <T>(method: string, params: unknown[]) => Promise<T>

const DEFAULT_BUSY_RETRY = { retries: 2, firstMs: 500, maxMs: 5_000 }

/**
 * How a node or the proxy before it says it is shedding load, in a JSON-RPC error: Lotus's gateway
 * past its rate limit ("server busy. rate: Wait(n=3) would exceed context deadline") or its
 * per-connection limit ("connection limited. …") (lotus gateway/node.go, limit), and the "too many
 * requests" of hosted endpoints. Nothing else in an error means busy.
 */
const BUSY_MESSAGE = /^(server busy|connection limited)\b|too many requests/i

type RpcErrorBody = { error: { code: number; message: string } }

const isRpcError = (body: unknown): body is RpcErrorBody => {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error
  return !!error && typeof error.code === 'number' && typeof error.message === 'string'
}

/** Retry-After in milliseconds (delta seconds or an HTTP date), undefined when absent or unreadable. */
function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** What an HTTP answer that is not 200 means: busy (429, 503), a JSON-RPC error the node sent with it, or an outage. */
async function failedAnswer(res: Response, method: string): Promise<NetworkError> {
  const httpStatus = res.status
  const body = await res.json().catch(() => undefined)
  // lotus gateway/handler.go answers a host over its connection limit 429 with no body; a proxy shedding load
  // answers 503 (nginx's limit_req_status default), often with a Retry-After.
  if (httpStatus === 429 || httpStatus === 503)
    return new NetworkError('BUSY', `Lotus node answered HTTP ${httpStatus} to ${method}`, {
      httpStatus,
      retryAfterMs: retryAfterMs(res.headers.get('retry-after')),
      ...(isRpcError(body) ? { rpcCode: body.error.code } : {}),
    })
  // go-jsonrpc answers its own protocol errors (no such method, bad params) with HTTP 500, or 400, and a
  // JSON-RPC error body (go-jsonrpc server.go, rpcError): the node's answer, not an outage.
  if (isRpcError(body)) return rpcAnswer(body, httpStatus)
  return new NetworkError('UNREACHABLE', `Lotus node answered HTTP ${httpStatus} to ${method}`, { httpStatus })
}

/** An error the node answered: BUSY when it says it sheds load, else REJECTED_BY_CHAIN with its code. */
function rpcAnswer(body: RpcErrorBody, httpStatus?: number): NetworkError {
  const { code, message } = body.error
  const detail = { rpcCode: code, ...(httpStatus === undefined ? {} : { httpStatus }) }
  return new NetworkError(BUSY_MESSAGE.test(message) ? 'BUSY' : 'REJECTED_BY_CHAIN', message, detail)
}

/**
 * A minimal JSON-RPC 2.0 client over HTTP POST, the transport Lotus and Forest serve on /rpc/v1.
 * Fails with a NetworkError: UNREACHABLE (no connection, an HTTP error), TIMED_OUT, PROTOCOL_ERROR
 * (not a JSON-RPC reply), BUSY (the node sheds load: sent again a few times first), or
 * REJECTED_BY_CHAIN when the node answered an error (`rpcCode`).
 */
export function createJsonRpc(options: JsonRpcOptions): JsonRpcCall {
  const doFetch = options.fetch ?? fetch
  const timeoutMs = options.timeoutMs ?? 30_000
  const busyRetry = options.busyRetry ?? DEFAULT_BUSY_RETRY
  let id = 0

  const once = async <T>(method: string, params: unknown[]): Promise<T> => {
    let res: Response
    const signal = AbortSignal.timeout(timeoutMs)
    try {
      res = await doFetch(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', method, params, id: ++id }),
        signal,
      })
    } catch (err) {
      if (signal.aborted) throw timedOut(`Lotus node did not answer ${method} within ${timeoutMs} ms`, err)
      throw new NetworkError('UNREACHABLE', `Lotus node unreachable: ${(err as Error).message}`, { cause: err })
    }
    if (!res.ok) throw await failedAnswer(res, method)
    const body = (await res.json().catch(() => undefined)) as { result?: T; error?: unknown } | undefined
    if (!body || typeof body !== 'object') throw protocolError(`Lotus node sent a malformed reply to ${method}`)
    if (body.error !== undefined) {
      if (!isRpcError(body)) throw protocolError(`Lotus node sent a malformed error to ${method}`)
      throw rpcAnswer(body)
    }
    return body.result as T
  }

  return async <T>(method: string, params: unknown[]): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await once<T>(method, params)
      } catch (err) {
        if (!(err instanceof NetworkError) || err.code !== 'BUSY' || attempt >= busyRetry.retries) throw err
        const backoff = busyRetry.firstMs * 2 ** attempt
        await sleep(Math.min(busyRetry.maxMs, err.retryAfterMs ?? backoff))
      }
    }
  }
}

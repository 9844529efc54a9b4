import { NetworkError, protocolError, timedOut } from '../errors.ts'

export interface JsonRpcOptions {
  url: string
  token?: string
  timeoutMs?: number
  fetch?: typeof fetch
}

export type JsonRpcCall = <T>(method: string, params: unknown[]) => Promise<T>

/**
 * A minimal JSON-RPC 2.0 client over HTTP POST, the transport Lotus and Forest serve on /rpc/v1.
 * Fails with a NetworkError: UNREACHABLE (no connection, an HTTP error), TIMED_OUT, PROTOCOL_ERROR
 * (not a JSON-RPC reply), or REJECTED_BY_CHAIN when the node answered an error (`rpcCode`).
 */
export function createJsonRpc(options: JsonRpcOptions): JsonRpcCall {
  const doFetch = options.fetch ?? fetch
  const timeoutMs = options.timeoutMs ?? 30_000
  let id = 0
  return async <T>(method: string, params: unknown[]): Promise<T> => {
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
    if (!res.ok) {
      await res.body?.cancel()
      throw new NetworkError('UNREACHABLE', `Lotus node answered HTTP ${res.status} to ${method}`)
    }
    const body = (await res.json().catch(() => undefined)) as { result?: T; error?: { code: number; message: string } } | undefined
    if (!body || typeof body !== 'object') throw protocolError(`Lotus node sent a malformed reply to ${method}`)
    if (body.error) throw new NetworkError('REJECTED_BY_CHAIN', String(body.error.message), { rpcCode: body.error.code })
    return body.result as T
  }
}

import { NetworkUnavailableError } from '../types.ts'

export interface JsonRpcOptions {
  url: string
  token?: string
  timeoutMs?: number
  fetch?: typeof fetch
}

/** An error the node answered with (as opposed to the node being unreachable). */
export class JsonRpcError extends Error {
  override name = 'JsonRpcError'
  constructor(readonly rpcCode: number, message: string) {
    super(message)
  }
}

export type JsonRpcCall = <T>(method: string, params: unknown[]) => Promise<T>

/** A minimal JSON-RPC 2.0 client over HTTP POST, the transport Lotus and Forest serve on /rpc/v1. */
export function createJsonRpc(options: JsonRpcOptions): JsonRpcCall {
  const doFetch = options.fetch ?? fetch
  let id = 0
  return async <T>(method: string, params: unknown[]): Promise<T> => {
    let res: Response
    try {
      res = await doFetch(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', method, params, id: ++id }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      })
    } catch (err) {
      throw new NetworkUnavailableError(`Lotus node unreachable: ${(err as Error).message}`)
    }
    if (!res.ok) throw new NetworkUnavailableError(`Lotus node answered HTTP ${res.status} to ${method}`)
    const body = (await res.json().catch(() => undefined)) as { result?: T; error?: { code: number; message: string } } | undefined
    if (!body || typeof body !== 'object') throw new NetworkUnavailableError(`Lotus node sent a malformed reply to ${method}`)
    if (body.error) throw new JsonRpcError(body.error.code, body.error.message)
    return body.result as T
  }
}

import { CommitError, StoreError } from '@filoz/synapse-sdk'
import { NetworkError } from '../errors.ts'

/** The innermost message of an error and its causes. */
export function rootMessage(error: unknown): string {
  let e: unknown = error
  while (e instanceof Error && e.cause instanceof Error) e = e.cause
  return e instanceof Error ? ((e as { shortMessage?: string }).shortMessage ?? e.message) : String(error)
}

/** Whether the error or one of its causes is an abort (the caller's signal, or a timeout). */
function aborted(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e.name === 'AbortError' || e.name === 'TimeoutError') return true
  return false
}

/** The wallet cannot pay: it holds less USDFC than it is asked to deposit. Not a network failure: a person must act. */
export class FocFundsError extends Error {
  override name = 'FocFundsError'
}

/**
 * Whether the error or one of its causes is a request to the chain's RPC at
 * `rpcUrl` that failed: viem's HttpRequestError and TimeoutError carry the URL
 * they asked, a refused connection the address and port it tried.
 */
function fromChainNode(error: unknown, rpcUrl: string): boolean {
  const rpc = new URL(rpcUrl)
  const rpcPort = Number(rpc.port || (rpc.protocol === 'https:' ? 443 : 80))
  const rpcHost = rpc.hostname.replace(/^\[|\]$/g, '')
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const { url, address, port } = e as { url?: unknown; address?: unknown; port?: unknown }
    if (typeof url === 'string' && URL.canParse(url) && new URL(url).origin === rpc.origin) return true
    if (address === rpcHost && port === rpcPort) return true
  }
  return false
}

/**
 * The SDK's failures as the network's closed set of codes (server/network/errors.ts).
 * A failure of the chain's RPC (`rpcUrl`) is the node's, never the provider's the SDK was working with.
 */
export function focNetworkError(error: unknown, rpcUrl?: string): NetworkError | FocFundsError {
  if (error instanceof NetworkError || error instanceof FocFundsError) return error
  const reason = rootMessage(error).slice(0, 500)
  if (rpcUrl !== undefined && fromChainNode(error, rpcUrl)) {
    const words = `the Onchain Cloud's RPC (${new URL(rpcUrl).origin}) did not answer: ${reason}`
    return new NetworkError(aborted(error) ? 'TIMED_OUT' : 'UNREACHABLE', words, { cause: error, chainNode: true })
  }
  const provider = error instanceof StoreError || error instanceof CommitError ? error.providerId : undefined
  if (aborted(error)) return new NetworkError('TIMED_OUT', reason, { cause: error, provider })
  if (/ECONNREFUSED|ECONNRESET|fetch failed|socket hang up|HTTP request failed/i.test(reason))
    return new NetworkError('UNREACHABLE', reason, { cause: error, provider })
  if (error instanceof StoreError)
    return new NetworkError('REFUSED', `provider refused the piece: ${reason}`, { cause: error, providerReason: reason, provider })
  if (error instanceof CommitError)
    return new NetworkError('REJECTED_BY_CHAIN', `the piece was not added on chain: ${reason}`, { cause: error, provider })
  return new NetworkError('PROTOCOL_ERROR', reason, { cause: error })
}

/** `work` with every failure as the network's (focNetworkError, the chain's RPC at `rpcUrl`): what each of the client's verbs throws. */
export const guarded =
  <A extends unknown[], R>(work: (...args: A) => Promise<R>, rpcUrl?: string) =>
  async (...args: A): Promise<R> => {
    try {
      return await work(...args)
    } catch (error) {
      throw focNetworkError(error, rpcUrl)
    }
  }

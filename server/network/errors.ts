/**
 * How a call to the network failed, as a closed set of codes, so that callers
 * decide by `code` and never by reading messages or third-party error names:
 * - `UNREACHABLE`: no connection (dial failed, node down, HTTP 5xx);
 * - `REFUSED`: the provider answered no (`providerReason` holds its words);
 * - `TIMED_OUT`: the call ran out of time (or was aborted);
 * - `PROTOCOL_ERROR`: an answer came that is malformed or not what the protocol says;
 * - `BUSY`: the node, or the proxy before it, is limiting or shedding load (HTTP 429 or 503, a
 *   "server busy" / "too many requests" error): the call was not made, ask again later;
 * - `REJECTED_BY_CHAIN`: the node answered a JSON-RPC error, or a message failed on chain (a contract's
 *   revert among them, in `revert`: the contract's answer, not an outage).
 *
 * The adapters under `server/network/` (the Boost/Curio client, the Lotus
 * JSON-RPC client, HTTP retrieval) turn what they meet into these at their
 * edge. The simulated network never throws them: it answers on the wire, and
 * the client maps what it receives.
 */
export const NETWORK_ERROR_CODES = ['UNREACHABLE', 'REFUSED', 'TIMED_OUT', 'PROTOCOL_ERROR', 'BUSY', 'REJECTED_BY_CHAIN'] as const
export type NetworkErrorCode = (typeof NETWORK_ERROR_CODES)[number]

/** A contract's revert, as the client read it: which contract and function, and its error by name where known. */
export interface ContractRevert {
  /** The contract, in words ("the warm storage service's view"), or its address. */
  contract?: string
  functionName?: string
  /** The custom error's name ("InsufficientLockupFunds"), or "Error" for a reason string; absent when not decoded. */
  errorName?: string
  /** The error with its arguments, the reason string, or what little is known. */
  error: string
}

export interface NetworkErrorDetail {
  cause?: unknown
  /** REFUSED: the provider's own reason (its message, or what it answered over HTTP). */
  providerReason?: string
  /** REJECTED_BY_CHAIN, BUSY: the node's JSON-RPC error code, when it answered one. */
  rpcCode?: number
  /** The HTTP status the node (or a proxy before it) answered, when not 200. */
  httpStatus?: number
  /** BUSY: how long the node asked to be left alone (its Retry-After), when it said. */
  retryAfterMs?: number
  /** REJECTED_BY_CHAIN: the exit code of a message that failed on chain, and the message. */
  exitCode?: number
  messageCid?: string
  /** The request went out and no answer came back: the peer may have acted on it (Boost takes a deal before it answers). */
  unanswered?: boolean
  /** Which provider the call failed with, where the caller could not choose it (the Synapse SDK picks PDP providers). */
  provider?: string
  /** The chain's node failed the call, not a provider (one Synapse SDK upload talks to both). */
  chainNode?: boolean
  /** REJECTED_BY_CHAIN: a contract reverted the call; its answer. */
  revert?: ContractRevert
}

export class NetworkError extends Error {
  override name = 'NetworkError'
  readonly providerReason?: string
  readonly rpcCode?: number
  readonly httpStatus?: number
  readonly retryAfterMs?: number
  readonly exitCode?: number
  readonly messageCid?: string
  readonly unanswered: boolean
  readonly provider?: string
  readonly chainNode: boolean
  readonly revert?: ContractRevert

  constructor(
    readonly code: NetworkErrorCode,
    message: string,
    detail: NetworkErrorDetail = {},
  ) {
    super(message, detail.cause === undefined ? undefined : { cause: detail.cause })
    this.providerReason = detail.providerReason
    this.rpcCode = detail.rpcCode
    this.httpStatus = detail.httpStatus
    this.retryAfterMs = detail.retryAfterMs
    this.exitCode = detail.exitCode
    this.messageCid = detail.messageCid
    this.unanswered = detail.unanswered ?? false
    this.provider = detail.provider
    this.chainNode = detail.chainNode ?? false
    this.revert = detail.revert
  }
}

/** Whether `err` is a NetworkError, of one of `codes` when given. */
export function isNetworkError(err: unknown, ...codes: NetworkErrorCode[]): err is NetworkError {
  return err instanceof NetworkError && (codes.length === 0 || codes.includes(err.code))
}

/** An answer that does not follow the protocol. */
export const protocolError = (message: string, cause?: unknown) => new NetworkError('PROTOCOL_ERROR', message, { cause })

/** The call's signal fired: out of time (or the caller gave up). */
export const timedOut = (message: string, cause?: unknown) => new NetworkError('TIMED_OUT', message, { cause })

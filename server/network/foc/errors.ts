import { CommitError, StoreError } from '@filoz/synapse-sdk'
import { decodeErrorResult, type Address, type Hex } from 'viem'
import { NetworkError, type ContractRevert } from '../errors.ts'
import { onchainCloudErrorsAbi } from './abi.ts'
import { FocDeploymentError } from './deployment.ts'

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
  /** What the account lacks in Filecoin Pay, when the chain's rule says it (USDFC, 18 decimals): a deposit of it lets the call through. */
  readonly shortBy?: bigint
  constructor(message: string, options?: ErrorOptions & { shortBy?: bigint }) {
    super(message, options)
    if (options?.shortBy !== undefined) this.shortBy = options.shortBy
  }
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

/** Lotus's JSON-RPC codes for a reverted call: 3 as geth has it (Lotus since 1.33), 11 before (api/api_errors.go EExecutionReverted). */
const REVERT_CODES = new Set([3, 11])
const REVERT_ERRORS = new Set(['ContractFunctionRevertedError', 'ExecutionRevertedError', 'RawContractError'])
const asHex = (v: unknown): Hex | undefined => (typeof v === 'string' && /^0x[0-9a-fA-F]{8,}$/.test(v) ? (v as Hex) : undefined)

/**
 * The contract's answer inside a failed call, when it was a revert (viem's revert errors, or the
 * node's revert code): its custom error decoded by name from GA's errors (abi.ts), a reason string,
 * or the selector of an error this client does not know; with the contract (named by `nameOf`)
 * and function called, where the error says. Undefined when nothing reverted.
 */
export function contractRevert(
  error: unknown,
  nameOf: (address: Address) => string | undefined = () => undefined,
): ContractRevert | undefined {
  let reverted = false
  let data: Hex | undefined
  let reason: string | undefined
  let address: Address | undefined
  let functionName: string | undefined
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const x = e as { code?: unknown; raw?: unknown; data?: unknown; reason?: unknown; contractAddress?: Address; functionName?: string }
    if (REVERT_ERRORS.has(e.name) || REVERT_CODES.has(x.code as number) || /execution reverted|revert reason/i.test(e.message))
      reverted = true
    data ??= asHex(x.raw) ?? asHex(x.data)
    if (typeof x.reason === 'string' && x.reason !== 'execution reverted') reason ??= x.reason
    address ??= x.contractAddress
    functionName ??= x.functionName
  }
  if (!reverted) return undefined
  const contract = address && (nameOf(address) ?? address)
  const where = { ...(contract ? { contract } : {}), ...(functionName ? { functionName } : {}) }
  if (!data) return { ...where, error: reason ?? 'no reason given' }
  try {
    // viem adds Error(string) and Panic(uint256) to the ABI it decodes with.
    const { errorName, args = [] } = decodeErrorResult({ abi: onchainCloudErrorsAbi, data }) as {
      errorName: string
      args?: readonly unknown[]
    }
    if (errorName === 'Error') return { ...where, errorName, error: String(args[0]) }
    return { ...where, errorName, error: `${errorName}(${args.map(String).join(', ')})` }
  } catch {
    return { ...where, error: `an error this client does not know (selector ${data.slice(0, 10)})` }
  }
}

/** "the warm storage service's view refused getPriceList(): …": a revert in words. */
export const revertWords = (r: ContractRevert) =>
  `${r.contract ?? 'a contract'} refused ${r.functionName ? `${r.functionName}()` : 'the call'}: ${r.error}`

/**
 * The SDK's failures as the network's closed set of codes (server/network/errors.ts).
 * A revert is the contract's answer (REJECTED_BY_CHAIN, with the error decoded, `nameOf` naming the
 * contract), never the node's failure. A failure of the chain's RPC (`rpcUrl`) is the node's, never
 * the provider's the SDK was working with.
 */
export function focNetworkError(
  error: unknown,
  rpcUrl?: string,
  nameOf?: (address: Address) => string | undefined,
): NetworkError | FocFundsError | FocDeploymentError {
  // Neither of the last two is the network failing a call: a person must fund the wallet, or the contracts cannot be used.
  if (error instanceof NetworkError || error instanceof FocFundsError || error instanceof FocDeploymentError) return error
  const reason = rootMessage(error).slice(0, 500)
  const provider = error instanceof StoreError || error instanceof CommitError ? error.providerId : undefined
  const revert = contractRevert(error, nameOf)
  if (revert) return new NetworkError('REJECTED_BY_CHAIN', revertWords(revert), { cause: error, revert, provider })
  if (rpcUrl !== undefined && fromChainNode(error, rpcUrl)) {
    const words = `the Onchain Cloud's RPC (${new URL(rpcUrl).origin}) did not answer: ${reason}`
    return new NetworkError(aborted(error) ? 'TIMED_OUT' : 'UNREACHABLE', words, { cause: error, chainNode: true })
  }
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
  <A extends unknown[], R>(work: (...args: A) => Promise<R>, rpcUrl?: string, nameOf?: (address: Address) => string | undefined) =>
  async (...args: A): Promise<R> => {
    try {
      return await work(...args)
    } catch (error) {
      throw focNetworkError(error, rpcUrl, nameOf)
    }
  }

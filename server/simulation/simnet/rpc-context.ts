import * as dagCbor from '@ipld/dag-cbor'
import { parseAddress } from '../../shared/address.ts'
import { cborCid } from './chain-wire.ts'
import type { Simnet } from './index.ts'

// JSON-RPC 2.0 error codes, and the code Lotus answers "not found" with.
export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const LOTUS_ERROR = 1

/** An error a method answers with: its JSON-RPC code and message, as Lotus would word them. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

/** Lotus methods by their JSON-RPC name (`Filecoin.X`), each taking the call's positional params. */
export type RpcMethods = Record<string, (params: unknown[]) => Promise<unknown>>

/** What every method table of the simulated node shares: the chain, and the tipset keys it has handed out. */
export interface RpcContext {
  simnet: Simnet
  /** The key of the tipset at `epoch`, remembered so that a method given it later answers at that epoch. */
  tipsetKey(epoch: number): { '/': string }[]
  /** The epoch of a tipset key parameter: the head for null or [] (Lotus's EmptyTSK). */
  epochOf(tsk: unknown): number
}

export function createRpcContext(simnet: Simnet): RpcContext {
  // Tipset keys the chain handed out, so that a method given one answers at its epoch.
  const tipsets = new Map<string, number>()
  return {
    simnet,
    tipsetKey(epoch) {
      const cid = cborCid(dagCbor.encode(['simnet tipset', epoch])).toString()
      if (tipsets.size >= 100_000) tipsets.clear()
      tipsets.set(cid, epoch)
      return [{ '/': cid }]
    },
    epochOf(tsk) {
      if (tsk === null || tsk === undefined || (Array.isArray(tsk) && tsk.length === 0)) return simnet.headEpoch()
      const first = Array.isArray(tsk) ? (tsk[0] as { '/'?: unknown } | undefined)?.['/'] : undefined
      const epoch = typeof first === 'string' ? tipsets.get(first) : undefined
      if (epoch === undefined) throw new RpcError(LOTUS_ERROR, 'loading tipset: tipset not found')
      return epoch
    },
  }
}

/** An address parameter as Lotus takes one (either network's prefix), a JSON-RPC params error when it is none. */
export function addressParam(value: unknown): string {
  if (typeof value !== 'string' || !parseAddress(value).ok)
    throw new RpcError(INVALID_PARAMS, 'expected a Filecoin address as the first parameter')
  return value
}

import * as dagCbor from '@ipld/dag-cbor'
import { METHOD_PUBLISH_STORAGE_DEALS, SIG_SECP256K1, STORAGE_MARKET_ACTOR_ID, writeJsonMessage } from './chain-wire.ts'
import { publishMessageCid } from './index.ts'
import { dealProposalTuple } from './provider-wire.ts'
import { INVALID_PARAMS, LOTUS_ERROR, RpcError, type RpcContext, type RpcMethods } from './rpc-context.ts'

/** The CBOR tuple of a PublishStorageDeals return: [IDs, ValidDeals as RLE+] (go-state-types builtin/v9/market PublishStorageDealsReturn). */
export function encodePublishReturn(ids: number[], validIndexes: number[]): Uint8Array {
  return dagCbor.encode([ids, rlePlus(validIndexes)])
}

/**
 * An RLE+ bitfield of ascending positions (go-bitfield rle/rleplus.go): bits from the least
 * significant of each byte, version 00, the first run's value, then runs coded as `1` (1),
 * `01` + 4 bits (0-15) or `00` + LEB128 varint, values alternating.
 */
function rlePlus(positions: number[]): Uint8Array {
  const runs: number[] = []
  let at = 0
  for (let i = 0; i < positions.length;) {
    let j = i
    while (j + 1 < positions.length && positions[j + 1] === positions[j] + 1) j++
    runs.push(positions[i] - at, j - i + 1)
    at = positions[j] + 1
    i = j + 1
  }
  const bits: number[] = [0, 0]
  const first = runs[0] === 0 ? 1 : 0
  bits.push(first)
  const push = (value: number, n: number) => {
    for (let k = 0; k < n; k++) bits.push((value >> k) & 1)
  }
  for (const run of first ? runs.slice(1) : runs) {
    if (run === 1) bits.push(1)
    else if (run < 16) {
      bits.push(0, 1)
      push(run, 4)
    } else {
      bits.push(0, 0)
      for (let v = run; ;) {
        const byte = v & 0x7f
        v = Math.floor(v / 128)
        push(v > 0 ? byte | 0x80 : byte, 8)
        if (v === 0) break
      }
    }
  }
  if (positions.length === 0) return new Uint8Array(0)
  const out = new Uint8Array(Math.ceil(bits.length / 8))
  bits.forEach((b, i) => (out[i >> 3] |= b << (i & 7)))
  return out
}

/**
 * The messages on chain, of which the simulated chain keeps one kind: the
 * PublishStorageDeals message that put a deal on chain, one deal each.
 */
export function messageMethods({ simnet, tipsetKey }: RpcContext): RpcMethods {
  return {
    // Lotus api/api_full.go MsgLookup for a deal's PublishStorageDeals message; null until it is on chain.
    async 'Filecoin.StateSearchMsg'([, m]) {
      const cid = (m as { '/'?: unknown } | null)?.['/']
      if (typeof cid !== 'string') throw new RpcError(INVALID_PARAMS, 'expected a message CID as the second parameter')
      const found = simnet.publishedMessage(cid)
      if (!found) return null
      const ret = encodePublishReturn([found.dealId], [0])
      return {
        Message: { '/': publishMessageCid(found.dealId) },
        Receipt: { ExitCode: 0, Return: Buffer.from(ret).toString('base64'), GasUsed: 28_000_000, EventsRoot: null },
        // ValidDeals as go-bitfield writes a bitfield in JSON: its run lengths, the first one of zeros.
        ReturnDec: { IDs: [found.dealId], ValidDeals: [0, 1] },
        TipSet: tipsetKey(found.epoch),
        Height: found.epoch,
      }
    },
    // The PublishStorageDeals message a provider sent (to f05, method 4: go-state-types builtin/methods.go MethodsMarket),
    // params [[ClientDealProposal…]] (go-state-types builtin/v9/market PublishStorageDealsParams), one deal per message here.
    async 'Filecoin.ChainGetMessage'([m]) {
      const cid = (m as { '/'?: unknown } | null)?.['/']
      if (typeof cid !== 'string') throw new RpcError(INVALID_PARAMS, 'expected a message CID as the first parameter')
      const found = simnet.publishedMessage(cid)
      if (!found) throw new RpcError(LOTUS_ERROR, `failed to load message: ipld: could not find ${cid}`)
      // The simulated chain keeps no client signatures: a secp256k1-typed placeholder stands in the ClientSignature's place.
      const params = dagCbor.encode([[[dealProposalTuple(found.proposal), Uint8Array.from([SIG_SECP256K1, ...new Uint8Array(65)])]]])
      const message = {
        version: 0,
        to: `f0${STORAGE_MARKET_ACTOR_ID}`,
        from: found.proposal.Provider,
        nonce: found.dealId % 1_000_000,
        value: 0n,
        gasLimit: 12_000_000,
        gasFeeCap: 150_000n,
        gasPremium: 100_000n,
        method: METHOD_PUBLISH_STORAGE_DEALS,
        params,
      }
      // Named by the CID asked for: the simulated chain names a publish message by its deal id (publishMessageCid).
      return { ...writeJsonMessage(message), CID: { '/': cid } }
    },
  }
}

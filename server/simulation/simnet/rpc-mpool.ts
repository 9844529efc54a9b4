import * as dagCbor from '@ipld/dag-cbor'
import { addressFromBytes, parseAddress } from '../../shared/address.ts'
import {
  METHOD_ADD_BALANCE,
  messageProblem,
  readJsonMessage,
  readJsonSignedMessage,
  signedMessageCid,
  STORAGE_MARKET_ACTOR_ID,
  verifyMessageSignature,
  writeJsonMessage,
} from './chain-wire.ts'
import { addressParam, INVALID_PARAMS, LOTUS_ERROR, RpcError, type RpcContext, type RpcMethods } from './rpc-context.ts'

/** The chain's own reading of a JSON parameter (chain-wire.ts), a JSON-RPC params error when it is not one. */
function readParam<T>(read: (v: unknown) => T, value: unknown, what: string): T {
  try {
    return read(value)
  } catch (err) {
    throw new RpcError(INVALID_PARAMS, `expected ${what}: ${(err as Error).message}`)
  }
}

/** Sending messages: a sender's next nonce, gas, and the push itself, of which the simulated chain takes only AddBalance. */
export function mpoolMethods({ simnet }: RpcContext): RpcMethods {
  return {
    async 'Filecoin.MpoolGetNonce'([a]) {
      return simnet.nonce(addressParam(a))
    },
    async 'Filecoin.GasEstimateMessageGas'([m]) {
      const message = readParam(readJsonMessage, m, 'a message')
      // Fixed, plausible gas: the simulated chain charges none.
      return writeJsonMessage({ ...message, gasLimit: 12_000_000, gasFeeCap: 150_000n, gasPremium: 100_000n })
    },
    async 'Filecoin.MpoolPush'([sm]) {
      const signed = readParam(readJsonSignedMessage, sm, 'a signed message')
      const { message } = signed
      // Lotus's mempool checks the message (ValidForBlockInclusion) before its signature (lotus chain/messagepool/messagepool.go, Push).
      const problem = messageProblem(message)
      if (problem) throw new RpcError(LOTUS_ERROR, problem)
      if (!verifyMessageSignature(signed)) throw new RpcError(LOTUS_ERROR, 'message signature is not valid')
      if (message.nonce !== simnet.nonce(message.from))
        throw new RpcError(LOTUS_ERROR, `nonce ${message.nonce} is not the next one (${simnet.nonce(message.from)})`)
      const to = parseAddress(message.to)
      if (
        !to.ok ||
        to.address.protocol !== 0 ||
        to.address.id !== String(STORAGE_MARKET_ACTOR_ID) ||
        message.method !== METHOD_ADD_BALANCE
      ) {
        throw new RpcError(LOTUS_ERROR, 'the simulated chain takes only AddBalance messages to the storage market actor')
      }
      let beneficiary: string | null = null
      try {
        const bytes = dagCbor.decode(message.params)
        if (bytes instanceof Uint8Array) beneficiary = addressFromBytes(bytes, to.address.network)
      } catch {
        beneficiary = null
      }
      if (!beneficiary) throw new RpcError(LOTUS_ERROR, 'AddBalance params must be an address')
      simnet.useNonce(message.from)
      simnet.addEscrow(beneficiary, message.value)
      // As Lotus: a secp256k1 message is known by its signed form's CID (lotus chain/types/signedmessage.go, Cid()).
      return { '/': signedMessageCid(signed).toString() }
    },
  }
}

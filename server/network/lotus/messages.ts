import * as dagCbor from '@ipld/dag-cbor'
import { addressBytesOf, parseAddress, type AddressNetwork } from '../../shared/address.ts'
import type { Signature, Signer } from '../wallet/keys.ts'
import { signedMessageCid, signMessage, type Message } from '../wallet/message.ts'
import { protocolError } from '../errors.ts'
import type { JsonRpcCall } from './json-rpc.ts'

/** A message as Lotus's JSON-RPC writes it (types.Message): amounts as decimal strings, params base64. */
export interface LotusMessage {
  Version: 0
  To: string
  From: string
  Nonce: number
  Value: string
  GasLimit: number
  GasFeeCap: string
  GasPremium: string
  Method: number
  Params: string | null
}

export const toLotusMessage = (m: Message): LotusMessage => ({
  Version: 0,
  To: m.to,
  From: m.from,
  Nonce: m.nonce,
  Value: m.value.toString(),
  GasLimit: m.gasLimit,
  GasFeeCap: m.gasFeeCap.toString(),
  GasPremium: m.gasPremium.toString(),
  Method: m.method,
  Params: m.params.length > 0 ? Buffer.from(m.params).toString('base64') : null,
})

/** Reads a Lotus JSON message; throws a RangeError naming the field that is wrong. */
export function fromLotusMessage(v: unknown): Message {
  const m = (v ?? {}) as Record<string, unknown>
  const text = (k: string) => {
    if (typeof m[k] !== 'string') throw new RangeError(`${k} must be a string`)
    return m[k] as string
  }
  const amount = (k: string) => {
    const t = text(k)
    if (!/^(0|[1-9][0-9]{0,40})$/.test(t)) throw new RangeError(`${k} must be a decimal amount`)
    return BigInt(t)
  }
  const int = (k: string) => {
    if (typeof m[k] !== 'number' || !Number.isSafeInteger(m[k]) || (m[k] as number) < 0)
      throw new RangeError(`${k} must be a non-negative integer`)
    return m[k] as number
  }
  for (const k of ['To', 'From']) if (!parseAddress(text(k)).ok) throw new RangeError(`${k} is not an address`)
  const params = m.Params === null || m.Params === undefined ? new Uint8Array(0) : Uint8Array.from(Buffer.from(text('Params'), 'base64'))
  return {
    to: text('To'),
    from: text('From'),
    nonce: int('Nonce'),
    value: amount('Value'),
    gasLimit: int('GasLimit'),
    gasFeeCap: amount('GasFeeCap'),
    gasPremium: amount('GasPremium'),
    method: int('Method'),
    params,
  }
}

export const lotusSignature = (s: Signature) => ({ Type: s.type, Data: Buffer.from(s.data).toString('base64') })

/** The storage market actor (f05) and its AddBalance method. */
export const MARKET_ACTOR_ID = 5
export const ADD_BALANCE_METHOD = 2

/**
 * Tops up the storage market escrow of `beneficiary` (the signer's own by
 * default) with `amount` attoFIL, as `lotus wallet market add` does: a signed
 * AddBalance message to the market actor (nonce from MpoolGetNonce, gas from
 * GasEstimateMessageGas), pushed with MpoolPush. Resolves with the CID the node
 * answered: for a secp256k1 key the signed message's, not the unsigned one's
 * (see signedMessageCid), and never rejects once the node has accepted the push.
 */
export async function addMarketBalance(
  call: JsonRpcCall,
  signer: Signer,
  amount: bigint,
  network: AddressNetwork,
  beneficiary = signer.address,
): Promise<string> {
  if (amount <= 0n) throw new RangeError('the amount must be more than zero')
  const beneficiaryBytes = addressBytesOf(beneficiary)
  const nonce = await call<number>('Filecoin.MpoolGetNonce', [signer.address])
  const draft: Message = {
    to: `${network === 'mainnet' ? 'f' : 't'}0${MARKET_ACTOR_ID}`,
    from: signer.address,
    nonce,
    value: amount,
    gasLimit: 0,
    gasFeeCap: 0n,
    gasPremium: 0n,
    method: ADD_BALANCE_METHOD,
    params: dagCbor.encode(beneficiaryBytes),
  }
  let estimated: Message
  try {
    estimated = fromLotusMessage(await call('Filecoin.GasEstimateMessageGas', [toLotusMessage(draft), { MaxFee: '0' }, null]))
  } catch (err) {
    // A reply that is not a message is the node breaking the protocol; its own errors pass as they are.
    throw err instanceof RangeError ? protocolError(`GasEstimateMessageGas answered no message: ${err.message}`, err) : err
  }
  // The node fills in gas only: anything else changed is not the message we meant to sign.
  if (
    estimated.to !== draft.to ||
    estimated.from !== draft.from ||
    estimated.value !== draft.value ||
    estimated.nonce !== draft.nonce ||
    estimated.method !== draft.method
  ) {
    throw protocolError('the node changed more than the gas of the message')
  }
  const signed = await signMessage(signer, estimated)
  const pushed = await call<{ '/': string } | null>('Filecoin.MpoolPush', [
    { Message: toLotusMessage(signed.message), Signature: lotusSignature(signed.signature) },
  ])
  // Once the node has taken the message the funds are on their way: reporting an error now
  // would make the operator pay twice. So whatever CID it answers, the push succeeded; the
  // one we name is the node's, or (if it answered none) the one Lotus would have answered.
  return typeof pushed?.['/'] === 'string' ? pushed['/'] : signedMessageCid(signed).toString()
}

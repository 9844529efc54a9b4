/**
 * Market escrow for paid deals, as `lotus wallet market add` funds it: a
 * signed AddBalance message (MpoolGetNonce, GasEstimateMessageGas, MpoolPush)
 * to the storage market actor, here pushed to the simulated chain's Lotus
 * JSON-RPC, which checks the signature and the nonce as a node does.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJsonRpc } from '../../server/network/lotus/json-rpc.ts'
import { addMarketBalance, lotusSignature, toLotusMessage } from '../../server/network/lotus/messages.ts'
import { createSimnet } from '../../server/simulation/simnet/index.ts'
import { SIMNET_RPC_PATH, simnetRpcListener } from '../../server/simulation/simnet/rpc-server.ts'
import { createSigner, newPrivateKey } from '../../server/network/wallet/keys.ts'
import { chainCid, encodeMessage, encodeSignedMessage, signMessage } from '../../server/network/wallet/message.ts'
import type { JsonRpcCall } from '../../server/network/lotus/json-rpc.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '..', '..')
const simnet = createSimnet({ seed: 'escrow' })
let node: RunningServer
let url: string
const call = () => createJsonRpc({ url })
const FIL = 10n ** 18n

beforeAll(async () => {
  node = await startServer(simnetRpcListener(simnet), 0, '127.0.0.1')
  url = `${node.url}${SIMNET_RPC_PATH}`
})
afterAll(() => node.close(100))

describe('market escrow (AddBalance)', () => {
  it('signs and pushes AddBalance; the escrow grows and the nonce moves on', async () => {
    const signer = createSigner(newPrivateKey(), 'mainnet')
    const first = await addMarketBalance(call(), signer, 2n * FIL, 'mainnet')
    expect(first).toMatch(/^bafy2bzace/)
    expect(await simnet.marketBalance(signer.address)).toEqual({ escrow: 2n * FIL, locked: 0n })
    await addMarketBalance(call(), signer, FIL / 2n, 'mainnet')
    expect((await simnet.marketBalance(signer.address)).escrow).toBe(2n * FIL + FIL / 2n)
    expect(simnet.nonce(signer.address)).toBe(2)
  })

  it('MpoolPush answers the signed message’s CID for secp256k1, and the wallet takes it as success', async () => {
    // Lotus (chain/types/signedmessage.go): a secp256k1 message's CID is that of the CBOR of [message, signature].
    const signer = createSigner(newPrivateKey(), 'mainnet')
    const message = {
      to: 'f05',
      from: signer.address,
      nonce: 0,
      value: FIL,
      gasLimit: 12_000_000,
      gasFeeCap: 150_000n,
      gasPremium: 100_000n,
      method: 2,
      params: Uint8Array.from([0x55, 0x01, ...new Uint8Array(20)]),
    }
    const signed = await signMessage(signer, message)
    const pushed = await call()<{ '/': string }>('Filecoin.MpoolPush', [
      { Message: toLotusMessage(signed.message), Signature: lotusSignature(signed.signature) },
    ])
    expect(pushed['/']).toBe(chainCid(encodeSignedMessage(signed)).toString())
    expect(pushed['/']).not.toBe(signed.cid.toString())
    const cid = await addMarketBalance(call(), signer, FIL, 'mainnet')
    // The first push credited the address in its params; this one the signer, and its CID is the node's answer.
    expect((await simnet.marketBalance(signer.address)).escrow).toBe(FIL)
    expect(cid).not.toBe(pushed['/'])
    expect(cid).toMatch(/^bafy2bzace/)
  })

  it('never reports failure after the node accepted the push, whatever CID it answers', async () => {
    const signer = createSigner(newPrivateKey(), 'mainnet')
    const odd = 'bafy2bzacedsomethingelseentirelyaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'
    let pushes = 0
    const fake: JsonRpcCall = async <T>(method: string, params: unknown[]): Promise<T> => {
      if (method === 'Filecoin.MpoolGetNonce') return 0 as T
      if (method === 'Filecoin.GasEstimateMessageGas')
        return { ...(params[0] as object), GasLimit: 1, GasFeeCap: '1', GasPremium: '1' } as T
      pushes++
      return { '/': odd } as T
    }
    await expect(addMarketBalance(fake, signer, FIL, 'mainnet')).resolves.toBe(odd)
    expect(pushes).toBe(1)
  })

  it('funds another address’s escrow when asked', async () => {
    const payer = createSigner(newPrivateKey(), 'mainnet')
    const client = createSigner(newPrivateKey(), 'mainnet').address
    await addMarketBalance(call(), payer, FIL, 'mainnet', client)
    expect((await simnet.marketBalance(client)).escrow).toBe(FIL)
    expect((await simnet.marketBalance(payer.address)).escrow).toBe(0n)
  })

  it('is refused with a signature that is not the sender’s, or a stale nonce, and nothing is credited', async () => {
    const signer = createSigner(newPrivateKey(), 'mainnet')
    const other = createSigner(newPrivateKey(), 'mainnet')
    const message = {
      to: 'f05',
      from: signer.address,
      nonce: 0,
      value: FIL,
      gasLimit: 12_000_000,
      gasFeeCap: 150_000n,
      gasPremium: 100_000n,
      method: 2,
      params: Uint8Array.from([0x55, 0x01, ...new Uint8Array(20)]),
    }
    const forged = await other.sign(chainCid(encodeMessage(message)).bytes)
    await expect(
      call()('Filecoin.MpoolPush', [{ Message: toLotusMessage(message), Signature: lotusSignature(forged) }]),
    ).rejects.toMatchObject({ name: 'NetworkError', code: 'REJECTED_BY_CHAIN' })
    const stale = await signMessage(signer, { ...message, nonce: 7 })
    await expect(
      call()('Filecoin.MpoolPush', [{ Message: toLotusMessage(stale.message), Signature: lotusSignature(stale.signature) }]),
    ).rejects.toThrow(/nonce 7/)
    await expect(
      call()('Filecoin.MpoolPush', [{ Message: { ...toLotusMessage(message), Value: '-5' }, Signature: lotusSignature(forged) }]),
    ).rejects.toThrow(/Value/)
    expect((await simnet.marketBalance(signer.address)).escrow).toBe(0n)
  })

  it('npm run wallet -- add-escrow 1.5 pays from the default key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'escrow-cli-'))
    const env = { ...process.env, DATA_DIR: dir, NETWORK: 'simnet', SIMNET_RPC_URL: url }
    const wallet = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'scripts/wallet.ts', ...args], { cwd: ROOT, env })
    try {
      const address = JSON.parse((await wallet('new', '--json')).stdout).address
      const out = JSON.parse((await wallet('add-escrow', '1.5', '--json')).stdout)
      expect(out.attoFil).toBe('1500000000000000000')
      expect((await simnet.marketBalance(address)).escrow).toBe(1_500_000_000_000_000_000n)
      await expect(wallet('add-escrow', 'lots')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('amount in FIL') })
      await expect(
        run(process.execPath, ['--import', 'tsx', 'scripts/wallet.ts', 'add-escrow', '1'], {
          cwd: ROOT,
          env: { ...env, SIMNET_RPC_URL: '' },
        }),
      ).rejects.toMatchObject({ code: 2 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/**
 * Keys, addresses and signatures as Filecoin defines them, against published
 * vectors: Trust Wallet Core's Filecoin tests (tests/chains/Filecoin/
 * SignerTests.cpp, TWAnySignerTests.cpp and the Kotlin/Swift TestFilecoin:
 * key 1d96…7dbe is f1z4a36sc7mfbv4z3qwutblp2flycdui3baffytbq, and the signed
 * 600 FIL transfer below, whose pre-image hash and signature they print).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { blake2b } from '@noble/hashes/blake2.js'
import { afterEach, describe, expect, it } from 'vitest'
import { createSigner, ethereumAddress, secp256k1Address, verifySignature } from '../../server/network/wallet/keys.ts'
import { delegatedAddress } from '../../server/shared/address.ts'
import { openKeystore, WalletError } from '../../server/network/wallet/keystore.ts'
import { bigIntBytes, encodeMessage, signMessage, type Message } from '../../server/network/wallet/message.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const KEY = Uint8Array.from(Buffer.from('1d969865e189957b9824bd34f26d5cbf357fda1a6d844cbf0c9ab1ed93fa7dbe', 'hex'))
const ADDRESS = 'f1z4a36sc7mfbv4z3qwutblp2flycdui3baffytbq'
const TRANSFER: Message = {
  to: 'f3um6uo3qt5of54xjbx3hsxbw5mbsc6auxzrvfxekn5bv3duewqyn2tg5rhrlx73qahzzpkhuj7a34iq7oifsq',
  from: ADDRESS,
  nonce: 2,
  value: 600_000_000_000_000_000_000n,
  gasLimit: 1000,
  gasFeeCap: 700_000_000_000_000_000_000n,
  gasPremium: 800_000_000_000_000_000_000n,
  method: 0,
  params: new Uint8Array(0),
}
// The unsigned message inside Trust Wallet Core's signed-transaction vector (its `encoded` minus the outer tuple and signature).
const TRANSFER_CBOR =
  '8a00583103a33d476e13eb8bde5d21becf2b86dd60642f0297cc6a5b914de86bb1d096861ba99bb13c577fee003e72f51e89f837c45501cf01bf485f61435e6770b52615bf455e043a2361024a002086ac3510526000001903e84a0025f273933db57000004a002b5e3af16b188000000040'
const TRANSFER_SIGNATURE = 'jMRu+OZ/lfppgmqSfGsntFrRLWZnUg3ZYmJTTRLsVt4V1310vR3VKGJpaE6S4sNvDOE6sEgmN9YmfTkPVK2qMgE='
const lotusExport = (key: Uint8Array, type = 'secp256k1') =>
  Buffer.from(JSON.stringify({ Type: type, PrivateKey: Buffer.from(key).toString('base64') })).toString('hex')

describe('wallet: addresses and signatures (published vectors)', () => {
  it('derives the f1 address of a secp256k1 key, and its t1 twin on testnets', () => {
    expect(secp256k1Address(KEY, 'mainnet')).toBe(ADDRESS)
    expect(secp256k1Address(KEY, 'testnet')).toBe(`t${ADDRESS.slice(1)}`)
  })

  it('derives the FEVM account of a key (0x, EIP-55) and its f410f address (published vectors)', () => {
    // web3.js's accounts documentation: this private key is account 0x2c7536E3605D9C16a7a3D7b1898e529396a65c23.
    expect(ethereumAddress(Buffer.from('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318', 'hex'))).toBe(
      '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23',
    )
    // go-address's test vectors (and Lotus's ethtypes tests): 0xd388…8498 is f410f2oekwcmo2pueydmaq53eic2i62crtbeyuzx2gmy.
    expect(delegatedAddress('mainnet', Buffer.from('d388ab098ed3e84c0d808776440b48f685198498', 'hex'))).toBe(
      'f410f2oekwcmo2pueydmaq53eic2i62crtbeyuzx2gmy',
    )
    expect(delegatedAddress('testnet', Buffer.from('8dbd6c7ede90646a61bbc649831b7c298bfd37a0', 'hex'))).toBe(
      't410frw6wy7w6sbsguyn3yzeygg34fgf72n5ao5sxyky',
    )
  })

  it('encodes a message as Lotus does, big amounts as sign byte and magnitude', () => {
    expect(Buffer.from(encodeMessage(TRANSFER)).toString('hex')).toBe(TRANSFER_CBOR)
    expect(Buffer.from(bigIntBytes(600_000_000_000_000_000_000n)).toString('hex')).toBe('002086ac351052600000')
    expect(bigIntBytes(0n)).toEqual(new Uint8Array(0))
  })

  it("signs a message over its CID with the vector's exact signature (deterministic k, recovery id last)", async () => {
    const signed = await signMessage(createSigner(KEY, 'mainnet'), TRANSFER)
    // Trust Wallet Core's pre-image hash: blake2b-256 of the message CID's bytes.
    expect(Buffer.from(blake2b(signed.cid.bytes, { dkLen: 32 })).toString('hex')).toBe(
      '8368c0f622b2c529c7fa147d75aa02aaa7fc13fc4847d4dc57e7a5c59048aafe',
    )
    expect(signed.signature.type).toBe(1)
    expect(Buffer.from(signed.signature.data).toString('base64')).toBe(TRANSFER_SIGNATURE)
    expect(verifySignature(ADDRESS, signed.cid.bytes, signed.signature)).toBe(true)
  })

  it('refuses signatures that are altered, by another key, or for another payload', async () => {
    const payload = new TextEncoder().encode('a deal proposal')
    const signature = await createSigner(KEY, 'mainnet').sign(payload)
    expect(verifySignature(ADDRESS, payload, signature)).toBe(true)
    const altered = { ...signature, data: Uint8Array.from(signature.data) }
    altered.data[10] ^= 1
    expect(verifySignature(ADDRESS, payload, altered)).toBe(false)
    expect(verifySignature(ADDRESS, new TextEncoder().encode('another proposal'), signature)).toBe(false)
    expect(
      verifySignature(
        secp256k1Address(
          Uint8Array.from({ length: 32 }, (_, i) => i + 1),
          'mainnet',
        ),
        payload,
        signature,
      ),
    ).toBe(false)
    expect(verifySignature('f01234', payload, signature)).toBe(false)
    await expect(
      signMessage(createSigner(KEY, 'mainnet'), { ...TRANSFER, from: 'f1rletqqhinhagw6nxjcr4kbfws25thgt7owzuruy' }),
    ).rejects.toThrow(/the key is f1z4a36/)
  })
})

describe('wallet: keystore', () => {
  let dir: string | undefined
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })

  it('imports a key exported by Lotus, keeps it in a 0600 file in a 0700 folder, and signs with it as the default', async () => {
    dir = mkdtempSync(join(tmpdir(), 'wallet-'))
    const keystore = openKeystore(join(dir, 'wallet'), 'mainnet')
    expect(keystore.importLotus(`${lotusExport(KEY)}\n`)).toMatchObject({ address: ADDRESS, isDefault: true })
    const made = keystore.create()
    expect(made.isDefault).toBe(false)
    expect(keystore.list().map((k) => k.address)).toEqual([ADDRESS, made.address])
    expect(statSync(join(dir, 'wallet')).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, 'wallet', `${ADDRESS.slice(1)}.key`)).mode & 0o777).toBe(0o600)
    const signature = await keystore.signer().sign(new Uint8Array([1, 2, 3]))
    expect(verifySignature(ADDRESS, new Uint8Array([1, 2, 3]), signature)).toBe(true)
    keystore.setDefault(made.address)
    expect(keystore.signer().address).toBe(made.address)
    // A key's FEVM account signs as its own 0x address, which the listing shows, and does not hold the key in sight.
    expect(keystore.evmAccount().address).toBe(made.ethAddress)
    const account = keystore.evmAccount(ADDRESS)
    expect(account.address).toBe(keystore.list()[1].ethAddress)
    expect(await account.signMessage({ message: 'deposit' })).toMatch(/^0x[0-9a-f]{130}$/)
    expect(JSON.stringify(account)).not.toContain(Buffer.from(KEY).toString('hex'))
    // The same key file gives the t1 address on a testnet.
    expect(
      openKeystore(join(dir, 'wallet'), 'testnet')
        .list()
        .map((k) => k.address),
    ).toContain(`t${ADDRESS.slice(1)}`)
  })

  it.each([
    ['not hex', 'zz'],
    ['hex of something else', Buffer.from('hello').toString('hex')],
    ['a BLS key', lotusExport(new Uint8Array(32).fill(7), 'bls')],
    ['a key of the wrong length', lotusExport(new Uint8Array(31).fill(7))],
    ['the zero key', lotusExport(new Uint8Array(32))],
  ])('refuses %s with a clear message, writing nothing', (_what, exported) => {
    dir = mkdtempSync(join(tmpdir(), 'wallet-'))
    const keystore = openKeystore(join(dir, 'wallet'), 'mainnet')
    expect(() => keystore.importLotus(exported)).toThrow(WalletError)
    expect(keystore.list()).toEqual([])
    expect(() => keystore.signer()).toThrow(/npm run wallet -- new/)
  })
})

describe('npm run wallet', () => {
  let dir: string | undefined
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })
  const wallet = (args: string[], input?: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/wallet.ts', ...args], {
      cwd: ROOT,
      input,
      encoding: 'utf8',
      env: { ...process.env, DATA_DIR: dir!, NETWORK: 'calibration' },
    })

  it('prints its usage with --help', () => {
    expect(execFileSync(process.execPath, ['--import', 'tsx', 'scripts/wallet.ts', '--help'], { cwd: ROOT, encoding: 'utf8' })).toMatch(
      /^Usage: npm run wallet/,
    )
  })

  it('imports from stdin and shows addresses and public keys, never the private key', () => {
    dir = mkdtempSync(join(tmpdir(), 'wallet-cli-'))
    const imported = wallet(['import', '--json'], lotusExport(KEY))
    expect(imported.status).toBe(0)
    expect(JSON.parse(imported.stdout)).toMatchObject({ address: `t${ADDRESS.slice(1)}`, isDefault: true })
    const shown = wallet(['show'])
    expect(shown.stdout).toContain(`t${ADDRESS.slice(1)}  (default)`)
    for (const out of [imported, shown, wallet(['list', '--json'])]) {
      expect(out.stdout + out.stderr).not.toContain(Buffer.from(KEY).toString('hex'))
      expect(out.stdout + out.stderr).not.toContain(Buffer.from(KEY).toString('base64'))
    }
    const bad = wallet(['import'], 'not a key')
    expect(bad.status).toBe(2)
    expect(bad.stderr.trim()).toBe('not a key exported by `lotus wallet export` (hex of its key info)')
  })
})

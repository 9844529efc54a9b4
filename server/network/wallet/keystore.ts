import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { privateKeyToAccount, type LocalAccount } from 'viem/accounts'
import { delegatedAddress, type AddressNetwork } from '../../shared/address.ts'
import { createSigner, ethereumAddress, newPrivateKey, secp256k1Address, type Signer } from './keys.ts'

/** What Lotus keeps (and `lotus wallet export` prints as hex of this JSON): the key type and the key, base64. */
interface LotusKeyInfo {
  Type: string
  PrivateKey: string
}

export interface WalletKey {
  address: string
  /** Uncompressed public key, hex. */
  publicKey: string
  /** The same key's FEVM account, which pays the Onchain Cloud: its 0x address… */
  ethAddress: `0x${string}`
  /** …and that account's f410f/t410f address, where FIL for it is sent. */
  delegatedAddress: string
  isDefault: boolean
}

export class WalletError extends Error {
  override name = 'WalletError'
}

export interface Keystore {
  list(): WalletKey[]
  /** A new random key; the first key becomes the default. */
  create(): WalletKey
  /** A key exported by `lotus wallet export` (hex of its JSON key info). */
  importLotus(exported: string): WalletKey
  setDefault(address: string): void
  /** The signer of `address`, or of the default key. */
  signer(address?: string): Signer
  /** The same key as an FEVM account that signs transactions and typed data (viem's), for the Onchain Cloud. */
  evmAccount(address?: string): LocalAccount
}

/**
 * The gateway's keys, one file per key under `dir` (mode 0700; files 0600)
 * holding Lotus's key info JSON, so a key moves to or from Lotus unchanged.
 * Files are named by the address without its network letter: one key is
 * `f1…` on mainnet and `t1…` on calibration. Private keys are never
 * returned, printed or logged; only signers leave this module.
 */
export function openKeystore(dir: string, network: AddressNetwork): Keystore {
  const defaultFile = join(dir, 'default')
  const slug = (address: string) => address.slice(1)
  const fileOf = (address: string) => join(dir, `${slug(address)}.key`)

  const ensureDir = () => {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    chmodSync(dir, 0o700)
  }
  const readKey = (file: string): Uint8Array => {
    const info = JSON.parse(readFileSync(file, 'utf8')) as LotusKeyInfo
    return Uint8Array.from(Buffer.from(info.PrivateKey, 'base64'))
  }
  const describe = (key: Uint8Array, defaultSlug: string | undefined): WalletKey => {
    const address = secp256k1Address(key, network)
    const ethAddress = ethereumAddress(key)
    return {
      address,
      publicKey: Buffer.from(secp256k1.getPublicKey(key, false)).toString('hex'),
      ethAddress,
      delegatedAddress: delegatedAddress(network, Buffer.from(ethAddress.slice(2), 'hex')),
      isDefault: slug(address) === defaultSlug,
    }
  }
  const defaultSlug = () => (existsSync(defaultFile) ? readFileSync(defaultFile, 'utf8').trim() : undefined)
  const writeAtomically = (file: string, text: string) => {
    const temp = `${file}.tmp`
    writeFileSync(temp, text, { mode: 0o600 })
    renameSync(temp, file)
  }

  const store = (key: Uint8Array): WalletKey => {
    ensureDir()
    const address = secp256k1Address(key, network)
    if (!existsSync(fileOf(address))) {
      writeAtomically(
        fileOf(address),
        JSON.stringify({ Type: 'secp256k1', PrivateKey: Buffer.from(key).toString('base64') } satisfies LotusKeyInfo),
      )
    }
    if (defaultSlug() === undefined) writeAtomically(defaultFile, slug(address))
    return describe(key, defaultSlug())
  }

  const keyOf = (address: string): Uint8Array => {
    if (!/^[ft]1[a-z2-7]{39}$/.test(address) || !existsSync(fileOf(address))) throw new WalletError(`no key for ${address} in ${dir}`)
    return readKey(fileOf(address))
  }

  const chosenAddress = (address?: string): string => {
    const chosen = address ?? (defaultSlug() && `${network === 'mainnet' ? 'f' : 't'}${defaultSlug()}`)
    if (!chosen) throw new WalletError(`no wallet key yet in ${dir}: create one with \`npm run wallet -- new\``)
    return chosen
  }

  return {
    list() {
      if (!existsSync(dir)) return []
      const current = defaultSlug()
      return readdirSync(dir)
        .filter((f) => f.endsWith('.key'))
        .map((f) => describe(readKey(join(dir, f)), current))
        .sort((a, b) => Number(b.isDefault) - Number(a.isDefault) || a.address.localeCompare(b.address))
    },
    create: () => store(newPrivateKey()),
    importLotus(exported) {
      const hex = exported.trim()
      if (!/^([0-9a-f]{2})+$/i.test(hex) || hex.length > 4096)
        throw new WalletError('not a key exported by `lotus wallet export` (hex of its key info)')
      let info: LotusKeyInfo
      try {
        info = JSON.parse(Buffer.from(hex, 'hex').toString('utf8')) as LotusKeyInfo
      } catch {
        throw new WalletError('the exported key does not hold key info JSON')
      }
      if (info?.Type !== 'secp256k1')
        throw new WalletError(`only secp256k1 keys (f1/t1 addresses) are supported, not ${JSON.stringify(String(info?.Type)).slice(0, 40)}`)
      const key = typeof info.PrivateKey === 'string' ? Uint8Array.from(Buffer.from(info.PrivateKey, 'base64')) : new Uint8Array(0)
      if (!secp256k1.utils.isValidSecretKey(key)) throw new WalletError('the exported key is not a valid secp256k1 private key')
      return store(key)
    },
    setDefault(address) {
      keyOf(address)
      writeAtomically(defaultFile, slug(address))
    },
    signer(address) {
      return createSigner(keyOf(chosenAddress(address)), network)
    },
    evmAccount(address) {
      return privateKeyToAccount(`0x${Buffer.from(keyOf(chosenAddress(address))).toString('hex')}`)
    },
  }
}

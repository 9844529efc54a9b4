import { parseAddress } from '../../shared/address.ts'
import { between } from './random.ts'

/** 1 PiB: what every simulated client may store in verified deals. */
const SIMULATED_DATACAP = 2n ** 50n

/** The accounts of the simulated chain: every address's actor id, its DataCap, market escrow and nonce. */
export interface ChainAccounts {
  /** The f0 id address behind an address; null when it is not an address. */
  lookupId(address: string): string | null
  dataCap(address: string): bigint | null
  marketBalance(address: string): { escrow: bigint; locked: bigint }
  /** Credits market escrow to an address (what an AddBalance message does on chain). */
  addEscrow(address: string, amount: bigint): void
  nonce(address: string): number
  useNonce(address: string): void
}

export function createChainAccounts(rand: (...labels: (string | number)[]) => number): ChainAccounts {
  // Escrow and nonces live in memory: the simulated chain keeps its deals, not its accounts.
  const escrow = new Map<string, bigint>()
  const nonces = new Map<string, number>()

  const lookupId = (address: string): string | null => {
    const parsed = parseAddress(address)
    if (!parsed.ok) return null
    if (parsed.address.protocol === 0) return `f0${parsed.address.id}`
    // Every robust address has an actor on the simulated chain, with a stable id.
    return `f0${between(rand('actor', parsed.address.text.slice(1)), 100_000, 9_999_999)}`
  }

  return {
    lookupId,
    // Every client of the simulated network is a verified client with ample DataCap, and holds escrow only once it adds some:
    // verified deals at price 0, the default, need nothing more.
    dataCap: (address) => (lookupId(address) ? SIMULATED_DATACAP : null),
    marketBalance(address) {
      const id = lookupId(address)
      return { escrow: (id && escrow.get(id)) || 0n, locked: 0n }
    },
    addEscrow(address, amount) {
      const id = lookupId(address)
      if (id) escrow.set(id, (escrow.get(id) ?? 0n) + amount)
    },
    nonce: (address) => nonces.get(lookupId(address) ?? address) ?? 0,
    useNonce(address) {
      const key = lookupId(address) ?? address
      nonces.set(key, (nonces.get(key) ?? 0) + 1)
    },
  }
}

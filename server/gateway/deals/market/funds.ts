import type { Logger } from '../../../shared/logger.ts'
import { createProblemNote } from '../note.ts'
import type { ClientFunds, StorageProviderPort } from './provider-port.ts'
import type { DealKind, DealTerms } from './types.ts'

/** FIP-0118: from network version 29 the verified registry refuses every write, so no deal can be verified. */
export const FIL_PLUS_ENDS_AT_NETWORK_VERSION = 29

/** What the client address can pay for, and which deals it can make: read from the chain on every pass. */
export interface MarketFunds {
  /** Reads the network version and the client's funds; keeps what it knew when the chain does not answer. */
  read(): Promise<void>
  /** Whether new deals are verified: asked for, and the network still has Fil+. */
  verified(): boolean
  kind(): DealKind
  /** Set while the client address lacks the DataCap or escrow its deals need (nothing is proposed then). */
  problem(): string | undefined
  /** The client address's DataCap and market escrow, as last read. */
  client(): ClientFunds | undefined
}

export function createMarketFunds(o: {
  providers: StorageProviderPort
  clientAddress: string
  terms: DealTerms
  logger: Logger
}): MarketFunds {
  const { providers, clientAddress: address, terms, logger } = o
  let networkVersion: number | undefined
  let funds: ClientFunds | undefined
  const note = createProblemNote(logger, {
    level: 'error',
    fields: { clientAddress: address },
    prefix: 'no deals are proposed: ',
    cleared: 'the client address can pay for deals again',
  })
  const verified = () => terms.verified && (networkVersion === undefined || networkVersion < FIL_PLUS_ENDS_AT_NETWORK_VERSION)

  async function readNetworkVersion(): Promise<void> {
    const before = verified()
    networkVersion = await providers.networkVersion().catch(() => networkVersion)
    if (terms.verified && before && !verified()) {
      logger.warn(
        { networkVersion },
        'the network has reached FIP-0118 (network version 29): Fil+ has ended, new deals are proposed as unverified deals',
      )
    }
  }

  /**
   * What stops the client address paying for the deals it would propose: a
   * verified deal needs DataCap (a provider refuses it otherwise, or it
   * fails at publish), a paid one free market escrow.
   */
  function problemWith(f: ClientFunds): { code: string; words: string } | undefined {
    if (verified()) {
      if (f.dataCap === null)
        return {
          code: 'NO_DATACAP',
          words: `${address} has no DataCap: it is not a verified client, so its verified deals would be refused (get DataCap from an allocator, or set DEAL_VERIFIED=false and fund escrow)`,
        }
      return f.dataCap === 0n ? { code: 'DATACAP_USED_UP', words: `the DataCap of ${address} is used up` } : undefined
    }
    // Under a price ceiling deals pay the providers' asks, which may be above DEAL_PRICE.
    const paid = BigInt(terms.pricePerGiBEpoch) > 0n || terms.maxPrice !== undefined
    if (paid && f.escrow - f.locked <= 0n)
      return { code: 'NO_ESCROW', words: `${address} has no free storage market escrow for paid deals (add funds with MarketAddBalance)` }
    return undefined
  }

  return {
    async read() {
      await readNetworkVersion()
      try {
        funds = await providers.clientFunds(address)
      } catch {
        return // The chain did not answer: keep what we knew.
      }
      note.set(problemWith(funds))
    },
    verified,
    kind: () => ({
      verified: verified(),
      networkVersion,
      note:
        terms.verified && !verified()
          ? `Fil+ ended at network version ${FIL_PLUS_ENDS_AT_NETWORK_VERSION} (FIP-0118): deals are unverified, no DataCap is needed`
          : undefined,
    }),
    problem: () => note.current?.words,
    client: () => funds,
  }
}

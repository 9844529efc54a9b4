import { paddedPieceSize, piecePricePerEpoch } from '../shared/piece.ts'
import type { NetworkPort, TransferType } from '../network/types.ts'
import { parseAddress } from '../shared/address.ts'
import type { DealStore } from './deal-store.ts'
import type { Tenant } from './tenants.ts'

/**
 * Why a provider cannot take a deal. The first nine are the real service's
 * codes; the last three are ours (documented in README).
 */
export const AVAILABILITY_REASONS = {
  SERVICE_UNAVAILABLE: 'The provider is not reachable or its deal terms are unknown',
  INVALID_CLIENT_ADDR: 'Your tenant has no valid client address to make deals with',
  CLIENT_NOT_AUTHORIZED: 'The provider only accepts deals from clients it has allowed',
  BUSY: 'The provider is not taking new deals right now or lacks the capacity',
  START_EPOCH_TOO_EARLY: 'The start epoch leaves the provider too little time to seal the data',
  DEAL_TYPE_NOT_ACCEPTED: 'The provider does not accept this deal type (verified or unverified)',
  PRICE_TOO_LOW: "The offered price is below the provider's asking price",
  PIECE_CID_DUPLICATED: 'The provider already stores or is storing this piece for you',
  UNSUPPORTED_TRANSFER_PROTOCOL: 'The provider does not support this transfer type',
  PROVIDER_NOT_FOUND: 'No storage provider with this address exists on chain',
  PIECE_SIZE_NOT_ACCEPTED: 'The piece is bigger than the provider accepts',
  DURATION_NOT_ACCEPTED: 'The deal duration is outside the durations the provider accepts',
} as const

export type AvailabilityReason = keyof typeof AVAILABILITY_REASONS

export interface DealRequest {
  pieceCid?: string
  startEpoch: number
  duration: number
  storagePricePerEpoch: bigint
  verifiedDeal: boolean
  transferSize: number
  transferType: TransferType
  removeUnsealedCopy: boolean
}

export type Availability = { isAvailable: true } | { isAvailable: false; reason: AvailabilityReason; message: string }

export interface AvailabilityChecker {
  check(tenant: Tenant, providerId: string, request: DealRequest, head: number): Promise<Availability>
}

/** Answers from each provider's terms, checked in a fixed order so the reason is predictable. */
export function createAvailabilityChecker(deps: { network: NetworkPort; deals: DealStore }): AvailabilityChecker {
  const no = (reason: AvailabilityReason): Availability => ({ isAvailable: false, reason, message: AVAILABILITY_REASONS[reason] })

  return {
    async check(tenant, providerId, request, head) {
      const miner = await deps.network.minerInfo(providerId)
      if (!miner) return no('PROVIDER_NOT_FOUND')
      const terms = await deps.network.providerTerms(miner.id)
      if (!terms || !terms.online) return no('SERVICE_UNAVAILABLE')

      const client = tenant.clientAddresses.find((a) => parseAddress(a).ok)
      if (!client) return no('INVALID_CLIENT_ADDR')
      if (terms.allowedClients) {
        const clientId = await deps.network.lookupId(client)
        if (!terms.allowedClients.includes(client) && !(clientId && terms.allowedClients.includes(clientId)))
          return no('CLIENT_NOT_AUTHORIZED')
      }
      if (!terms.transferTypes.includes(request.transferType)) return no('UNSUPPORTED_TRANSFER_PROTOCOL')
      if (request.verifiedDeal ? !terms.acceptsVerified : !terms.acceptsUnverified) return no('DEAL_TYPE_NOT_ACCEPTED')
      if (request.startEpoch < head + terms.minStartLead) return no('START_EPOCH_TOO_EARLY')
      // A piece below the provider's minimum is padded up to it by the client (as Lotus clients do); only too big is a no.
      const pieceSize = Math.max(paddedPieceSize(request.transferSize), terms.minPieceSize)
      if (pieceSize > terms.maxPieceSize) return no('PIECE_SIZE_NOT_ACCEPTED')
      if (request.duration < terms.minDuration || request.duration > terms.maxDuration) return no('DURATION_NOT_ACCEPTED')
      // Both prices are per GiB per epoch; a provider compares them for the piece, rounded down, as Boost and Curio
      // do (boost storagemarket/deal_acceptance.go), so a small piece may be taken at a lower price per GiB.
      const ask = BigInt(request.verifiedDeal ? terms.verifiedPrice : terms.unverifiedPrice)
      if (piecePricePerEpoch(request.storagePricePerEpoch, pieceSize) < piecePricePerEpoch(ask, pieceSize)) return no('PRICE_TOO_LOW')
      if (request.pieceCid) {
        const holders = await deps.deals.pieceDeals(tenant.id, request.pieceCid)
        if (holders.some((d) => d.provider === miner.id && (d.status === 'published' || d.status === 'active')))
          return no('PIECE_CID_DUPLICATED')
      }
      const busyNow = terms.busy.some((r) => head >= r.from && head <= r.to)
      if (busyNow || terms.freeCapacity < pieceSize) return no('BUSY')
      return { isAvailable: true }
    },
  }
}

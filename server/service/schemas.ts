import { z } from 'zod'
import { CID } from 'multiformats/cid'
import { TRANSFER_TYPES } from '../network/types.ts'
import { EPOCHS_PER_DAY, MAX_DEAL_DAYS, MIN_DEAL_DAYS } from '../shared/epochs.ts'
import { attoAmount, epochNumber } from './validation.ts'
import { AVAILABILITY_REASONS } from './availability.ts'
import { IMPORT_CODES, PolicyDocumentSchema } from './onboarding-policy.ts'

export const DEFAULT_START_OFFSET = 5760
/** The largest sector (64 GiB) bounds a piece; a CAR beyond it can never be a deal. */
const MAX_TRANSFER_SIZE = Math.floor((64 * 1024 ** 3 * 127) / 128)

const pieceCid = z
  .string()
  .max(200)
  .refine((s) => {
    try {
      const cid = CID.parse(s)
      return cid.version === 1 && cid.code === 0xf101 && cid.multihash.code === 0x1012
    } catch {
      return false
    }
  }, 'must be a piece CID (baga…, fil-commitment-unsealed)')

const dealTerms = {
  pieceCid: pieceCid.optional(),
  startEpochHeadOffset: epochNumber.optional(),
  startEpoch: epochNumber.optional(),
  duration: z
    .number()
    .int('must be an integer')
    .min(MIN_DEAL_DAYS * EPOCHS_PER_DAY, `must be at least ${MIN_DEAL_DAYS * EPOCHS_PER_DAY} epochs (${MIN_DEAL_DAYS} days)`)
    .max(MAX_DEAL_DAYS * EPOCHS_PER_DAY, `must be at most ${MAX_DEAL_DAYS * EPOCHS_PER_DAY} epochs (${MAX_DEAL_DAYS} days)`),
  storagePricePerEpoch: attoAmount,
  providerCollateral: attoAmount.optional(),
  verifiedDeal: z.boolean(),
  transferSize: z
    .number()
    .int('must be an integer')
    .min(1, 'must be positive')
    .max(MAX_TRANSFER_SIZE, 'is larger than a 64 GiB sector holds'),
  transferType: z.enum(TRANSFER_TYPES as [string, ...string[]]),
  removeUnsealedCopy: z.boolean(),
}

const noBothStarts = (b: { startEpoch?: number; startEpochHeadOffset?: number }) =>
  !(b.startEpoch !== undefined && b.startEpochHeadOffset !== undefined)
const bothStartsMessage = { message: 'give startEpoch or startEpochHeadOffset, not both' }

export const BestProvidersBody = z.strictObject(dealTerms).refine(noBothStarts, bothStartsMessage)
export const ProviderAvailabilityBody = z
  .strictObject({ ...dealTerms, providerAddressId: z.string().min(1).max(200) })
  .refine(noBothStarts, bothStartsMessage)

export const OnChainDealsBody = z.strictObject({
  sortBy: z.enum(['dealId', 'lastUpdate']).default('dealId'),
  next: z.string().max(64).nullable().default(null),
})

export const EpochDurationBody = z.strictObject({
  duration: z
    .number()
    .int('must be a whole number of days')
    .min(1, 'must be at least 1 day')
    .max(MAX_DEAL_DAYS, `must be at most ${MAX_DEAL_DAYS} days (the longest deal)`),
})

export const EpochFromTimestampBody = z.strictObject({
  unixTimestamp: z
    .number()
    .int('must be an integer number of milliseconds')
    .min(0, 'must not be negative')
    .max(Number.MAX_SAFE_INTEGER, 'is too large'),
})

export const TickerByPairBody = z.strictObject({
  pair: z.string().regex(/^[A-Z0-9]{2,12}_[A-Z0-9]{2,12}$/, 'must look like <BASE>_<QUOTE>, e.g. FIL_USD'),
})

export { PolicyDocumentSchema }

// Response shapes, for the OpenAPI description.
const errorObject = z.object({ code: z.string().describe('UUID of this request; quote it to support'), message: z.string() })
export const ErrorEnvelope = z.object({ error: errorObject })
const pairQuote = z.object({ price: z.number(), volume: z.number() })
export const TickerLatestResponse = z.array(
  z.object({ exchange: z.string(), fetchedAt: z.number().int(), data: z.record(z.string(), pairQuote) }),
)
export const TickerByPairResponse = z.object({
  pair: z.string(),
  tickers: z.array(z.object({ exchange: z.string(), data: pairQuote, fetchedAt: z.number().int() })),
  weightedPrice: z.number(),
})
export const VersionResponse = z.object({ error: z.null(), result: z.object({ version: z.string() }) })
const proposal = z.object({
  PieceSize: z.number().int(),
  PieceCID: z.object({ '/': z.string() }),
  VerifiedDeal: z.boolean(),
  Client: z.string(),
  Provider: z.string(),
  Label: z.string(),
  StartEpoch: z.number().int(),
  EndEpoch: z.number().int(),
  StoragePricePerEpoch: z.string(),
  ProviderCollateral: z.string(),
  ClientCollateral: z.string(),
})
export const OnChainDealsResponse = z.object({
  error: z.null(),
  next: z.string().nullable(),
  result: z.record(
    z.string(),
    z.object({
      lastUpdate: z.number(),
      proposal,
      state: z.object({
        status: z.enum(['published', 'published-expired', 'active', 'slashed', 'expired', 'unknown']),
        publishedEpoch: z.number().int(),
        onChainStartEpoch: z.number().int(),
        onChainEndEpoch: z.number().int(),
      }),
    }),
  ),
})
export const BestProvidersResponse = z.object({
  error: z.null(),
  result: z.object({
    reason: z.enum(['ONBOARDING_IN_PROGRESS', 'ONBOARDING_COMPLETED', 'NO_PROVIDERS_AVAILABLE']).optional(),
    providers: z.array(z.string()).max(3),
  }),
})
export const ProviderAvailabilityResponse = z.object({
  error: z.null(),
  result: z.object({
    isAvailable: z.boolean(),
    reason: z.enum(Object.keys(AVAILABILITY_REASONS) as [string, ...string[]]).optional(),
    message: z.string().optional(),
  }),
})
export const IntegerResult = z.object({ error: z.null(), result: z.number().int() })
export const PolicyExportResponse = z.object({ error: z.null(), result: PolicyDocumentSchema })
export const ImportCodes = z.enum(IMPORT_CODES)

/** Endpoints without a body accept none, `{}`, or nothing else. */
export const EmptyBody = z.strictObject({})

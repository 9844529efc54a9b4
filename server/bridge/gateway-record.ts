import { z } from 'zod'
import { CopyFailureCodeSchema } from '../shared/contracts/copy-failure.ts'
import { PDP_MILESTONES } from '../shared/contracts/file-info.ts'

/**
 * The gateway's `/file-info` answer, as loose as the real gateways need:
 * unknown fields are ignored, the CIDgravity gateway's misspellings are
 * accepted, and numbers may arrive as numeric strings.
 */
const count = z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]).pipe(z.number().int().min(0))
const integer = z
  .union([
    z.number(),
    z
      .string()
      .regex(/^-?\d+$/)
      .transform(Number),
  ])
  .pipe(z.number().int())

export const GatewayDealSchema = z.object({
  provider: z.string(),
  state: z.string(),
  dealId: integer,
  endEpoch: integer,
  isRetrievable: z.boolean(),
  // Our gateway's PDP copies say so; dropped rather than failing the record when odd.
  route: z.literal('pdp').optional().catch(undefined),
  dataSetId: count.optional().catch(undefined),
  pieceId: count.optional().catch(undefined),
  lastProofEpoch: count.optional().catch(undefined),
  milestone: z.enum(PDP_MILESTONES).optional().catch(undefined),
  firstProofDueEpoch: count.optional().catch(undefined),
  missedProofEpoch: count.optional().catch(undefined),
  stopsCountingEpoch: count.optional().catch(undefined),
  // Our gateway dates its PDP copies on the Onchain Cloud chain's own clock (unix seconds).
  endTimestamp: count.optional().catch(undefined),
  lastProofTimestamp: count.optional().catch(undefined),
  firstProofDueTimestamp: count.optional().catch(undefined),
  missedProofTimestamp: count.optional().catch(undefined),
  stopsCountingTimestamp: count.optional().catch(undefined),
})

/** Our gateway's deals that providers failed; another gateway's odd entry drops the list rather than the record. */
export const GatewayFailedDealSchema = z.object({
  provider: z.string().max(200),
  dealId: integer.optional(),
  reason: z.string().max(2000),
  // Our gateway's code for it: dropped rather than failing the list when it is one this version does not know.
  reasonCode: CopyFailureCodeSchema.optional().catch(undefined),
  replaced: z.boolean(),
})

export const GatewayGroupSchema = z.object({
  // Our gateway's optional additions: dropped rather than failing the record when odd.
  groupId: count.optional().catch(undefined),
  fileCount: count.optional().catch(undefined),
  state: z.string(),
  pieceCid: z.string().optional(),
  retrievableCopies: count.optional(),
  deals: z.array(GatewayDealSchema).nullish(),
  failedDeals: z.array(GatewayFailedDealSchema).max(1000).optional().catch(undefined),
  // Our gateway's plain-words progress; optional, and dropped rather than failing the record when odd.
  reason: z.string().max(2000).optional().catch(undefined),
  reasonCode: z
    .string()
    .regex(/^[A-Z_]{1,64}$/)
    .optional()
    .catch(undefined),
})

export const GatewayDetailsSchema = z.object({
  state: z.string().nullish(),
  retrievableCopies: count.nullish(),
  groups: z.array(GatewayGroupSchema).nullish(),
  // Our gateway's per-state file counts of a folder; optional, dropped rather than failing the record when odd.
  fileCounts: z.record(z.string().max(64), count).optional().catch(undefined),
  expirationEpoch: integer.nullish(),
  expriationEpoch: integer.nullish(),
  expirationTimestamp: integer.nullish(),
  expriationTimestamp: integer.nullish(),
})

export const GatewayFileSchema = z.object({
  cid: z.string().min(1),
  path: z.string().optional(),
  file: z.string().optional(),
  details: GatewayDetailsSchema.nullish(),
})

export const FileInfoSuccessSchema = z.object({
  success: z.literal(true),
  result: z.object({ file: GatewayFileSchema }),
})

export const FileInfoFailureSchema = z.object({
  success: z.literal(false),
  error: z.string().optional(),
})

export type GatewayDeal = z.infer<typeof GatewayDealSchema>
export type GatewayFailedDeal = z.infer<typeof GatewayFailedDealSchema>
export type GatewayGroup = z.infer<typeof GatewayGroupSchema>
export type GatewayDetails = z.infer<typeof GatewayDetailsSchema>
export type GatewayFile = z.infer<typeof GatewayFileSchema>

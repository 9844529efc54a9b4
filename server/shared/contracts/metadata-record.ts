import { z } from 'zod'
import { CopyFailureCodeSchema } from './copy-failure.ts'
import { PDP_MILESTONES } from './file-info.ts'

/**
 * `POST /ocs/v2.php/apps/gateway/get-file-metadata`: what the Files sidebar
 * asks and what it reads. The bridge's conversion produces these types, the
 * OpenAPI description is generated from these schemas, and plugin-ui takes
 * its record types from here (types only), so none of them can drift apart.
 */

/** The longest path a client may name, in characters. */
export const MAX_PATH_LENGTH = 4096

export const MetadataRequestSchema = z.strictObject({
  filePath: z.string().min(1, 'must not be empty').max(MAX_PATH_LENGTH, `is longer than ${MAX_PATH_LENGTH} characters`),
})

export const FILE_STATE_LABELS = ['Staging', 'Offloading', 'Partially offloaded', 'Offloaded', 'Unknown'] as const

export const MetadataDealSchema = z.object({
  provider: z.string().describe('Storage provider address, e.g. f01234'),
  state: z.string().describe('proposed, published or active'),
  dealId: z.number().int(),
  endEpoch: z.number().int(),
  isRetrievable: z.boolean(),
  route: z
    .literal('pdp')
    .optional()
    .describe(
      'Present on a PDP copy on Filecoin Onchain Cloud (proved every day), when the gateway says (ours does); its provider is `pdp:<registry id>`, its dealId its data set',
    ),
  dataSetId: z.number().int().optional().describe('PDP copies: the data set on chain'),
  pieceId: z.number().int().optional().describe("PDP copies: the piece's id in its data set"),
  lastProofEpoch: z.number().int().optional().describe('PDP copies: the epoch of the last accepted proof'),
  endTimestamp: z
    .number()
    .int()
    .optional()
    .describe(
      "PDP copies: endEpoch (how far its payments are funded) as Unix seconds, on the clock of the Onchain Cloud's own chain as the gateway reads it (ours does), else the configured network's",
    ),
  lastProofTimestamp: z
    .number()
    .int()
    .optional()
    .describe("PDP copies: when the last accepted proof was made, Unix seconds on the Onchain Cloud chain's clock"),
  milestone: z
    .enum(PDP_MILESTONES)
    .optional()
    .describe(
      'PDP copies, when the gateway says (ours does): uploading, committed (piece added and confirmed on chain, not proved yet) or proved (a proof covering it accepted)',
    ),
  firstProofDueEpoch: z
    .number()
    .int()
    .optional()
    .describe("Committed PDP copies: the epoch the challenge window of its first proof opens, from its data set's proving schedule"),
  firstProofDueTimestamp: z
    .number()
    .int()
    .optional()
    .describe("firstProofDueEpoch as Unix seconds on the Onchain Cloud chain's clock (else the configured network's)"),
  missedProofEpoch: z
    .number()
    .int()
    .optional()
    .describe(
      'Proved PDP copies that missed a proof, when the gateway says (ours does): the deadline of the first proving period missed in a row; absent once it proves again',
    ),
  missedProofTimestamp: z
    .number()
    .int()
    .optional()
    .describe("missedProofEpoch as Unix seconds on the Onchain Cloud chain's clock (else the configured network's)"),
  stopsCountingEpoch: z
    .number()
    .int()
    .optional()
    .describe(
      'With missedProofEpoch: the epoch after which the copy stops counting (and another is made) unless its provider proves again',
    ),
  stopsCountingTimestamp: z
    .number()
    .int()
    .optional()
    .describe("stopsCountingEpoch as Unix seconds on the Onchain Cloud chain's clock (else the configured network's)"),
})

export const MetadataFailedDealSchema = z.object({
  provider: z.string().describe('Storage provider address, e.g. f01234'),
  dealId: z.number().int().optional().describe('The chain deal id, when the deal was published before it failed'),
  reason: z.string().describe("Why it failed, as the gateway says: a code (SEALING_FAILED, NOT_SEALED_IN_TIME…) or the provider's words"),
  reasonCode: CopyFailureCodeSchema.optional().describe('The code `reason` was worded from, when the gateway says (ours does)'),
  replaced: z.boolean().describe('Whether another provider was asked in its place'),
})

export const MetadataGroupSchema = z.object({
  groupId: z
    .number()
    .int()
    .optional()
    .describe("The gateway's number of the group, the same for every file and folder that shows it, when the gateway says (ours does)"),
  state: z.string().describe('writable, full, VRCARDone, ready for deals, offloaded or reload'),
  pieceCid: z.string().optional().describe("Piece CID (v1, baga6ea4seaq…) once the group's CAR is written"),
  retrievableCopies: z.number().int().min(0),
  deals: z.array(MetadataDealSchema).optional(),
  failedDeals: z
    .array(MetadataFailedDealSchema)
    .optional()
    .describe('Deals a provider accepted and then failed, oldest first, when the gateway says (ours does); `deals` leaves them out'),
  reason: z
    .string()
    .optional()
    .describe("Why the group is not further along yet, in plain words, when the gateway says (ours does; CIDgravity's gateway does not)"),
  reasonCode: z
    .string()
    .optional()
    .describe(
      'The code of `reason` when the gateway says (ours: WAITING_FOR_DATA, SEALING, DEALS_UNDER_WAY, NO_PROVIDER…), for counting; the words are in `reason`',
    ),
  fileCount: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Folders, when the gateway says: how many files below the folder have data in this group'),
})

export const MetadataDetailsSchema = z.object({
  state: z.enum(FILE_STATE_LABELS),
  retrievableCopies: z.number().int().min(0).describe('Copies of the whole file that can be retrieved (minimum over its groups)'),
  expirationEpoch: z.number().int().optional().describe('Absent while no copy is retrievable'),
  expirationTimestamp: z
    .number()
    .int()
    .optional()
    .describe(
      "When that deal ends, as unix seconds: a deal-market deal's on the configured network's clock, a PDP copy's on the Onchain Cloud chain's (the gateway's date)",
    ),
  groups: z.array(MetadataGroupSchema),
  fileCounts: z
    .partialRecord(z.enum(FILE_STATE_LABELS), z.number().int().min(0))
    .optional()
    .describe('Folders, when the gateway says: how many files below are in each state ("Offloaded": 5, "Staging": 1)'),
})

export const MetadataFileSchema = z.object({
  cid: z.string().describe('UnixFS CIDv1 of the file or folder'),
  path: z.string().describe('Folder of the file, as the user sees it'),
  file: z.string().describe('Name of the file or folder'),
  details: MetadataDetailsSchema,
})

export const MetadataResponseSchema = z.object({
  success: z.literal(true),
  metadata: z.object({ file: MetadataFileSchema }),
})

export const BridgeErrorSchema = z.object({
  success: z.literal(false),
  error: z.string(),
})

export type FileStateLabel = (typeof FILE_STATE_LABELS)[number]
export type MetadataDeal = z.infer<typeof MetadataDealSchema>
export type MetadataFailedDeal = z.infer<typeof MetadataFailedDealSchema>
export type MetadataGroup = z.infer<typeof MetadataGroupSchema>
export type MetadataDetails = z.infer<typeof MetadataDetailsSchema>
export type MetadataFile = z.infer<typeof MetadataFileSchema>
export type MetadataResponse = z.infer<typeof MetadataResponseSchema>

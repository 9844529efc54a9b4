import { z } from 'zod'
import { CopyFailureCodeSchema } from './copy-failure.ts'

/**
 * `POST /file-info`, the gateway's record of a file or folder (spec: "Gateway
 * file record"). The gateway builds its answer as these types, the OpenAPI
 * description is generated from these schemas, and the tests parse the real
 * answers with them. (The bridge reads gateways more loosely, in
 * bridge/gateway-record.ts: CIDgravity's gateway misspells and stringifies.)
 */

/** Unknown fields are refused (400) so a typo like `verbos` is not silently ignored. */
export const FileInfoRequestSchema = z.strictObject({
  filePath: z.string().optional(),
  // Older clients spell it in lower case.
  filepath: z.string().optional(),
  verbose: z.boolean().optional(),
})

export const FILE_STATES = ['staging', 'offloading', 'partially_offloaded', 'offloaded'] as const
export const GROUP_STATES = ['writable', 'full', 'VRCARDone', 'ready_for_deals', 'offloaded', 'reload'] as const
export const DEAL_STATES = ['proposed', 'published', 'active'] as const
/**
 * A PDP copy's milestones: uploading (the bytes going to its provider and its piece being added on chain),
 * committed (the piece added and confirmed on chain; seconds to minutes after the upload), proved (a proof
 * covering it accepted: within the next proving period, a day on mainnet). They are its deal states
 * proposed, published and active, in the Onchain Cloud's words.
 */
export const PDP_MILESTONES = ['uploading', 'committed', 'proved'] as const
/** Why a group is not further along yet, one code per reason (gateway/group-reason.ts words each), for a UI to explain and count. */
export const GROUP_REASON_CODES = [
  'WAITING_FOR_DATA',
  'WAITING_FOR_DISK_SPACE',
  'SEALING',
  'CHECKING_CAR',
  'RELOADING',
  'RELEASING',
  'NO_DEAL_SERVICE',
  'DEALS_UNDER_WAY',
  'WAITING_FOR_FUNDS',
  'DEAL_SERVICE_UNREACHABLE',
  'NO_PROVIDER',
  'WAITING_FOR_UPLOAD_SLOT',
  'LOOKING_FOR_PROVIDERS',
  'CONTRACT_REFUSED',
  'CHAIN_UNREACHABLE',
  'PROOF_MISSED',
] as const

/** A moment as whole Unix seconds. */
const unixSeconds = z.number().int()

export const FileInfoDealSchema = z.object({
  provider: z.string(),
  state: z.enum(DEAL_STATES),
  dealId: z.number().int(),
  endEpoch: z.number().int(),
  isRetrievable: z.boolean(),
  route: z
    .literal('pdp')
    .optional()
    .describe(
      "Optional, additive: present on a PDP copy on Filecoin Onchain Cloud (warm storage proved every day), absent on a deal-market deal. Such a copy's provider is `pdp:<registry id>`, its dealId is its data set, its endEpoch how far its payments are funded",
    ),
  dataSetId: z.number().int().min(0).optional().describe('Optional, additive (PDP copies): the data set on chain holding the piece'),
  pieceId: z.number().int().min(0).optional().describe("Optional, additive (PDP copies): the piece's id in its data set"),
  lastProofEpoch: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Optional, additive (PDP copies): the epoch of the last proof of possession the chain accepted; absent before the first'),
  milestone: z
    .enum(PDP_MILESTONES)
    .optional()
    .describe(
      'Optional, additive (PDP copies): uploading (sent to its provider, its piece being added on chain), committed (piece added and confirmed on chain, not proved yet), proved (a proof covering it accepted); its `state` is proposed, published, active in the same order',
    ),
  firstProofDueEpoch: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "Optional, additive (committed PDP copies): the epoch the challenge window of its first proof opens, from its data set's proving schedule on chain (a piece is first challenged in the proving period after the one it was added in: up to a day on mainnet, two hours on calibration); absent before the chain has been read and once proved",
    ),
  endTimestamp: unixSeconds
    .optional()
    .describe(
      "Optional, additive (PDP copies): endEpoch as Unix seconds on the clock of the Onchain Cloud's own chain, read from its blocks (it need not be the deal market's); absent while the gateway has not read that chain's clock",
    ),
  lastProofTimestamp: unixSeconds
    .optional()
    .describe("Optional, additive (PDP copies): lastProofEpoch as Unix seconds on the Onchain Cloud chain's clock"),
  firstProofDueTimestamp: unixSeconds
    .optional()
    .describe("Optional, additive (committed PDP copies): firstProofDueEpoch as Unix seconds on the Onchain Cloud chain's clock"),
  missedProofEpoch: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "Optional, additive (proved PDP copies): the deadline of the first proving period its provider missed in a row (the warm storage service's proven periods on chain), present from the first miss until a proof comes in time; the copy still counts until `stopsCountingEpoch`",
    ),
  stopsCountingEpoch: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      'Optional, additive, with `missedProofEpoch`: the epoch after which the copy stops counting (and another is made) unless its provider proves again: the end of the second proving period after the first one missed',
    ),
  missedProofTimestamp: unixSeconds
    .optional()
    .describe("Optional, additive: missedProofEpoch as Unix seconds on the Onchain Cloud chain's clock"),
  stopsCountingTimestamp: unixSeconds
    .optional()
    .describe("Optional, additive: stopsCountingEpoch as Unix seconds on the Onchain Cloud chain's clock"),
})

export const FileInfoFailedDealSchema = z.object({
  provider: z.string(),
  dealId: z.number().int().optional().describe('The chain deal id, when the deal was published before it failed'),
  reason: z
    .string()
    .describe("Why it failed: a code of ours (SEALING_FAILED, NOT_SEALED_IN_TIME, PROPOSAL_EXPIRED…) or the provider's own words"),
  reasonCode: CopyFailureCodeSchema.optional().describe(
    'Optional, additive: the code `reason` was worded from, from a closed list (copy-failure.ts); the tab words it, and decisions read it, never the words',
  ),
  replaced: z.boolean().describe('Whether another provider was asked in its place'),
})

export const FileInfoGroupSchema = z.object({
  groupId: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Optional, additive: the gateway's number of the group, the same in every record that shows it"),
  state: z.enum(GROUP_STATES),
  pieceCid: z.string().optional(),
  retrievableCopies: z.number().int().min(0),
  deals: z.array(FileInfoDealSchema).optional().describe('Only for states that can have deals'),
  failedDeals: z
    .array(FileInfoFailedDealSchema)
    .optional()
    .describe(
      'Optional, additive: deals a provider accepted and then failed (sealing failed, not sealed in time…), oldest first, which `deals` leaves out; absent when there are none. Proposals a provider refused are not deals and are not listed.',
    ),
  reason: z
    .string()
    .optional()
    .describe(
      'Optional, additive: why the group is not further along yet, in plain words (e.g. "waiting for more data: 4 MiB of 64 MiB…", "2 providers are fetching the data"); absent once offloaded, unless a copy missed its proof (PROOF_MISSED). Other gateways may not send it.',
    ),
  reasonCode: z
    .enum(GROUP_REASON_CODES)
    .optional()
    .describe('Optional, additive: the code `reason` was worded from, present exactly when `reason` is'),
  fileCount: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "Folders only, optional and additive: how many files below the folder have data in this group (0: it holds only the folder's own directory nodes)",
    ),
})

export const FileInfoDetailsSchema = z.object({
  state: z.enum(FILE_STATES),
  retrievableCopies: z.number().int().min(0),
  groups: z.array(FileInfoGroupSchema),
  fileCounts: z
    .partialRecord(z.enum(FILE_STATES), z.number().int().min(0))
    .optional()
    .describe('Folders only, optional and additive: how many files below the folder are in each state'),
})

export const FileInfoFileSchema = z.object({
  cid: z.string(),
  path: z.string(),
  file: z.string(),
  details: FileInfoDetailsSchema.optional().describe('Only with verbose: true'),
})

export const FileInfoResponseSchema = z.object({
  success: z.literal(true),
  result: z.object({ file: FileInfoFileSchema }),
})

/** Every failure of the gateway's own routes. */
export const GatewayFailureSchema = z.object({ success: z.literal(false), error: z.string() })

export type FileInfoRequest = z.infer<typeof FileInfoRequestSchema>
export type FileState = (typeof FILE_STATES)[number]
export type GroupState = (typeof GROUP_STATES)[number]
export type DealState = (typeof DEAL_STATES)[number]
export type PdpMilestone = (typeof PDP_MILESTONES)[number]
export type GroupReasonCode = (typeof GROUP_REASON_CODES)[number]
export type FileInfoDeal = z.infer<typeof FileInfoDealSchema>
export type FileInfoFailedDeal = z.infer<typeof FileInfoFailedDealSchema>
export type FileInfoGroup = z.infer<typeof FileInfoGroupSchema>
export type FileInfoDetails = z.infer<typeof FileInfoDetailsSchema>
export type FileInfoFile = z.infer<typeof FileInfoFileSchema>
export type FileInfoResponse = z.infer<typeof FileInfoResponseSchema>

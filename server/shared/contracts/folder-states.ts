import { z } from 'zod'
import { FILE_STATES, GROUP_REASON_CODES } from './file-info.ts'
import { FILE_STATE_LABELS, MAX_PATH_LENGTH } from './metadata-record.ts'

/**
 * The states of every entry of one folder, in one request: what the Files
 * list shows as a badge beside each name. A listing of 1 000 files costs one
 * request to the bridge and one to the gateway, never one per file.
 *
 * Two surfaces, like the record: the gateway's `POST /folder-states` (an
 * addition of ours: other gateways answer 404, and the list then shows no
 * badges) and the bridge's `POST /ocs/v2.php/apps/gateway/get-folder-states`.
 */

/** The reasons a person has to act on (or wait for an admin to): shown as "needs attention", not "on its way". */
export const ATTENTION_REASON_CODES = [
  'WAITING_FOR_DISK_SPACE',
  'NO_DEAL_SERVICE',
  'WAITING_FOR_FUNDS',
  'DEAL_SERVICE_UNREACHABLE',
  'NO_PROVIDER',
  'CONTRACT_REFUSED',
  'CHAIN_UNREACHABLE',
  'PROOF_MISSED',
] as const satisfies readonly (typeof GROUP_REASON_CODES)[number][]

export const isAttentionCode = (code: string): code is AttentionReasonCode => (ATTENTION_REASON_CODES as readonly string[]).includes(code)

const folderPath = z.string().min(1, 'must not be empty').max(MAX_PATH_LENGTH, `is longer than ${MAX_PATH_LENGTH} characters`)

/** The gateway's request: always the whole folder (the bridge keeps it and answers parts of it). */
export const GatewayFolderStatesRequestSchema = z.strictObject({ folderPath })

/** At most this many `names` in one request: more rows than any screen of the Files list shows. */
export const MAX_FOLDER_STATE_NAMES = 500

export const FolderStatesRequestSchema = z.strictObject({
  folderPath,
  names: z
    .array(z.string().min(1, 'must not be empty').max(MAX_PATH_LENGTH, `is longer than ${MAX_PATH_LENGTH} characters`))
    .max(MAX_FOLDER_STATE_NAMES, `has more than ${MAX_FOLDER_STATE_NAMES} names`)
    .optional()
    .describe(
      'Only these entries (the rows the Files list shows): the answer then costs what is shown, not the size of the folder. Without it, every entry',
    ),
})

const attention = z
  .object({
    code: z.enum(ATTENTION_REASON_CODES),
    reason: z.string().describe("The group's reason in plain words"),
  })
  .describe('Present when a group holding the entry (or, for a folder, any file below it) waits on something a person must fix')

export const GatewayFolderEntrySchema = z.object({
  name: z.string(),
  kind: z.enum(['file', 'dir']),
  cid: z.string().optional().describe('Absent while a file is still uploading'),
  state: z.enum(FILE_STATES).describe('For a folder: of everything below it, the same rule as its record'),
  retrievableCopies: z.number().int().min(0),
  attention: attention.optional(),
})

export const GatewayFolderStatesResponseSchema = z.object({
  success: z.literal(true),
  result: z.object({
    folder: z.object({ path: z.string(), entries: z.array(GatewayFolderEntrySchema) }),
  }),
})

export const FolderEntrySchema = z.object({
  name: z.string().describe("The entry's name in the folder, as the user sees it"),
  cid: z.string().optional(),
  state: z.enum(FILE_STATE_LABELS),
  retrievableCopies: z.number().int().min(0),
  attention: attention.optional(),
})

export const FolderStatesResponseSchema = z.object({
  success: z.literal(true),
  folder: z.object({
    path: z.string().describe('The folder, as the user sees it'),
    entries: z
      .array(FolderEntrySchema)
      .describe('Its entries the gateway knows (of `names`, when asked); an entry that is not on the gateway is absent'),
    ipfsGateway: z
      .string()
      .optional()
      .describe(
        'Where retrievable entries can be opened on IPFS (e.g. https://ipfs.io); present only when the linked network publishes data and an IPFS gateway is set',
      ),
  }),
})

export type AttentionReasonCode = (typeof ATTENTION_REASON_CODES)[number]
export type GatewayFolderEntry = z.infer<typeof GatewayFolderEntrySchema>
export type GatewayFolderStatesResponse = z.infer<typeof GatewayFolderStatesResponseSchema>
export type FolderEntry = z.infer<typeof FolderEntrySchema>
export type FolderStatesResponse = z.infer<typeof FolderStatesResponseSchema>

import { z } from 'zod'
import { buildOpenApi } from '../shared/openapi.ts'
import { FileInfoBody } from './file-info.ts'

// The answer of POST /file-info (spec: "Gateway file record").
const DealSchema = z.object({
  provider: z.string(),
  state: z.enum(['proposed', 'published', 'active']),
  dealId: z.number().int(),
  endEpoch: z.number().int(),
  isRetrievable: z.boolean(),
})
const GroupSchema = z.object({
  groupId: z.number().int().min(1).optional().describe('Optional, additive: the gateway\'s number of the group, the same in every record that shows it'),
  state: z.enum(['writable', 'full', 'VRCARDone', 'ready_for_deals', 'offloaded', 'reload']),
  pieceCid: z.string().optional(),
  retrievableCopies: z.number().int().min(0),
  deals: z.array(DealSchema).optional().describe('Only for states that can have deals'),
  reason: z.string().optional().describe('Optional, additive: why the group is not further along yet, in plain words (e.g. "waiting for more data: 4 MiB of 64 MiB…", "2 providers are fetching the data"); absent once offloaded. Other gateways may not send it.'),
  fileCount: z.number().int().min(0).optional().describe('Folders only, optional and additive: how many files below the folder have data in this group (0: it holds only the folder\'s own directory nodes)'),
})
export const FileInfoResponseSchema = z.object({
  success: z.literal(true),
  result: z.object({
    file: z.object({
      cid: z.string(),
      path: z.string(),
      file: z.string(),
      details: z.object({
        state: z.enum(['staging', 'offloading', 'partially_offloaded', 'offloaded']),
        retrievableCopies: z.number().int().min(0),
        groups: z.array(GroupSchema),
        fileCounts: z.partialRecord(z.enum(['staging', 'offloading', 'partially_offloaded', 'offloaded']), z.number().int().min(0)).optional()
          .describe('Folders only, optional and additive: how many files below the folder are in each state'),
      }).optional().describe('Only with verbose: true'),
    }),
  }),
})
const FailureSchema = z.object({ success: z.literal(false), error: z.string() })

/** The gateway's HTTP API besides WebDAV (RFC 4918 on every other path). */
export function gatewayOpenApi(version: string): Record<string, unknown> {
  return buildOpenApi({
    title: 'Filecoin gateway',
    version,
    description: 'WebDAV (RFC 4918 class 1 and 2) serves every path except POST /file-info.',
    securitySchemes: { basic: { type: 'http', scheme: 'basic', description: 'Service account, when GATEWAY_USER and GATEWAY_PASSWORD are set' } },
    operations: [{
      method: 'post', path: '/file-info', security: ['basic'],
      summary: 'Status of a file or folder uploaded to the gateway',
      description: 'filePath (or filepath) is the path in the gateway\'s tree; a folder aggregates everything below it.',
      body: FileInfoBody,
      responses: {
        200: { description: 'The record', schema: FileInfoResponseSchema },
        400: { description: 'Malformed body or path', schema: FailureSchema },
        401: { description: 'Credentials required', schema: FailureSchema },
        404: { description: 'No such file or folder', schema: FailureSchema },
        413: { description: 'Body over 1 MiB', schema: FailureSchema },
      },
    }],
  })
}

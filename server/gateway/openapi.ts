import { FileInfoRequestSchema, FileInfoResponseSchema, GatewayFailureSchema } from '../shared/contracts/file-info.ts'
import { GatewayFolderStatesRequestSchema, GatewayFolderStatesResponseSchema } from '../shared/contracts/folder-states.ts'
import { GatewayStatusRequestSchema, GatewayStatusResponseSchema } from '../shared/contracts/gateway-status.ts'
import { buildOpenApi } from '../shared/openapi.ts'

/** The gateway's HTTP API besides WebDAV (RFC 4918 on every other path). */
export function gatewayOpenApi(version: string): Record<string, unknown> {
  return buildOpenApi({
    title: 'Filecoin gateway',
    version,
    description: 'WebDAV (RFC 4918 class 1 and 2) serves every path except POST /file-info, POST /folder-states and POST /status.',
    securitySchemes: {
      basic: { type: 'http', scheme: 'basic', description: 'Service account, when GATEWAY_USER and GATEWAY_PASSWORD are set' },
    },
    operations: [
      {
        method: 'post',
        path: '/file-info',
        security: ['basic'],
        summary: 'Status of a file or folder uploaded to the gateway',
        description: "filePath (or filepath) is the path in the gateway's tree; a folder aggregates everything below it.",
        body: FileInfoRequestSchema,
        responses: {
          200: { description: 'The record', schema: FileInfoResponseSchema },
          400: { description: 'Malformed body or path', schema: GatewayFailureSchema },
          401: { description: 'Credentials required', schema: GatewayFailureSchema },
          404: { description: 'No such file or folder', schema: GatewayFailureSchema },
          413: { description: 'Body over 1 MiB', schema: GatewayFailureSchema },
        },
      },
      {
        method: 'post',
        path: '/folder-states',
        security: ['basic'],
        summary: 'State of each direct entry of a folder, in one request (an addition of ours: other gateways answer 404)',
        description:
          "For the Files list's badges: a listing of any size costs one request. A sub-folder's state follows the same rule as its record. The answer carries an ETag; this POST is a read, so If-None-Match naming it gets 304 while the folder's states are unchanged.",
        headers: [{ name: 'If-None-Match', description: 'The ETag of a previous answer for this folder', optional: true }],
        body: GatewayFolderStatesRequestSchema,
        responses: {
          200: { description: "The folder's entries (ETag header)", schema: GatewayFolderStatesResponseSchema },
          304: { description: 'Unchanged since the answer whose ETag If-None-Match names; no body' },
          400: { description: 'Malformed body or path, or the path names a file', schema: GatewayFailureSchema },
          401: { description: 'Credentials required', schema: GatewayFailureSchema },
          404: { description: 'No such folder', schema: GatewayFailureSchema },
          413: { description: 'Body over 64 KiB', schema: GatewayFailureSchema },
        },
      },
      {
        method: 'post',
        path: '/status',
        security: ['basic'],
        summary: "The gateway's network, deals and each storage route's funding (an addition of ours: other gateways answer 404)",
        description: "For the admin's link test: read afresh on every request. The body is `{}` (or none); amounts are decimal strings.",
        body: GatewayStatusRequestSchema,
        bodyRequired: false,
        responses: {
          200: { description: 'The status', schema: GatewayStatusResponseSchema },
          400: { description: 'A field in the body, or a body that is not JSON', schema: GatewayFailureSchema },
          401: { description: 'Credentials required', schema: GatewayFailureSchema },
          413: { description: 'Body over 1 KiB', schema: GatewayFailureSchema },
        },
      },
    ],
  })
}

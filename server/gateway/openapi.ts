import { FileInfoRequestSchema, FileInfoResponseSchema, GatewayFailureSchema } from '../shared/contracts/file-info.ts'
import { buildOpenApi } from '../shared/openapi.ts'

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
      body: FileInfoRequestSchema,
      responses: {
        200: { description: 'The record', schema: FileInfoResponseSchema },
        400: { description: 'Malformed body or path', schema: GatewayFailureSchema },
        401: { description: 'Credentials required', schema: GatewayFailureSchema },
        404: { description: 'No such file or folder', schema: GatewayFailureSchema },
        413: { description: 'Body over 1 MiB', schema: GatewayFailureSchema },
      },
    }],
  })
}

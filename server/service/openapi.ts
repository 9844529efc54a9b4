import { z } from 'zod'
import { ENDPOINTS } from './catalog.ts'
import { ErrorEnvelope } from './schemas.ts'
import { API_VERSION } from './routes/public.ts'
import { PLAN_LABELS } from './tenants.ts'

const schema = (s: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(s, { io, target: 'openapi-3.0', unrepresentable: 'any' })

/** An OpenAPI 3 description generated from the same zod schemas that validate requests. */
export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } })
  for (const e of ENDPOINTS) {
    const responses: Record<string, unknown> = {
      200: e.response ? { description: 'Success', content: { 'application/json': { schema: schema(e.response, 'output') } } } : { description: 'Success, no body' },
    }
    if (e.body) {
      responses[400] = errorResponse(e.errorCodes ? `Malformed request, or one of: ${e.errorCodes.join(', ')}` : 'Malformed, incorrect or ambiguous request')
    }
    if (e.plans) {
      responses[401] = errorResponse('Missing or unknown X-API-KEY')
      responses[403] = errorResponse('Plan not eligible')
    }
    responses[500] = errorResponse('The service cannot process the request at this time')
    paths[e.path] = {
      [e.method]: {
        summary: e.summary,
        description: e.plans ? `Plans: ${e.plans.map((p) => PLAN_LABELS[p]).join(', ')}` : 'Public',
        ...(e.plans ? { security: [{ ApiKey: [] }] } : {}),
        ...(e.body ? { requestBody: { required: e.bodyRequired ?? false, content: { 'application/json': { schema: schema(e.body, 'input') } } } } : {}),
        responses,
      },
    }
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Storage deal service', version: API_VERSION },
    paths,
    components: {
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' } },
      schemas: { Error: schema(ErrorEnvelope, 'output') },
    },
  }
}

import { buildOpenApi, type Operation } from '../shared/openapi.ts'
import { ENDPOINTS } from './catalog.ts'
import { ErrorEnvelope } from './schemas.ts'
import { API_VERSION } from './routes/public.ts'
import { PLAN_LABELS } from './tenants.ts'

const failure = (description: string) => ({ description, schema: ErrorEnvelope })

/** The deal service's OpenAPI 3 description, generated from the same zod schemas that validate requests. */
export function serviceOpenApi(): Record<string, unknown> {
  const operations = ENDPOINTS.map((e): Operation => {
    const responses: Operation['responses'] = {
      200: e.response ? { description: 'Success', schema: e.response } : { description: 'Success, no body' },
      500: failure('The service cannot process the request at this time'),
    }
    if (e.body)
      responses[400] = failure(
        e.errorCodes ? `Malformed request, or one of: ${e.errorCodes.join(', ')}` : 'Malformed, incorrect or ambiguous request',
      )
    if (e.plans) {
      responses[401] = failure('Missing or unknown X-API-KEY')
      responses[403] = failure('Plan not eligible')
    }
    return {
      method: e.method,
      path: e.path,
      summary: e.summary,
      description: e.plans ? `Plans: ${e.plans.map((p) => PLAN_LABELS[p]).join(', ')}` : 'Public',
      security: e.plans ? ['ApiKey'] : undefined,
      body: e.body,
      bodyRequired: e.bodyRequired ?? false,
      responses,
    }
  })
  return buildOpenApi({
    title: 'Storage deal service',
    version: API_VERSION,
    securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' } },
    operations,
  })
}

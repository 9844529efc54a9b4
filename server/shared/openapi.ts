import { z } from 'zod'

/** One HTTP operation, described by the zod schemas that validate it. */
export interface Operation {
  method: 'get' | 'post' | 'put'
  path: string
  summary: string
  description?: string
  /** Security scheme names from `securitySchemes` that the operation accepts. */
  security?: string[]
  /** Request headers, e.g. `OCS-APIRequest`; required unless `optional`. */
  headers?: { name: string; description: string; optional?: boolean }[]
  body?: z.ZodType
  /** Default true. */
  bodyRequired?: boolean
  responses: Record<number, { description: string; schema?: z.ZodType }>
}

export interface ApiDescription {
  title: string
  version: string
  description?: string
  securitySchemes?: Record<string, unknown>
  operations: Operation[]
}

const toSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, target: 'openapi-3.0', unrepresentable: 'any' })

/** An OpenAPI 3.0 document generated from the same zod schemas the routes use. */
export function buildOpenApi(api: ApiDescription): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const op of api.operations) {
    const responses = Object.fromEntries(
      Object.entries(op.responses).map(([status, r]) => [
        status,
        r.schema
          ? { description: r.description, content: { 'application/json': { schema: toSchema(r.schema, 'output') } } }
          : { description: r.description },
      ]),
    )
    paths[op.path] ??= {}
    paths[op.path][op.method] = {
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      ...(op.security ? { security: op.security.map((name) => ({ [name]: [] })) } : {}),
      ...(op.headers
        ? {
            parameters: op.headers.map((h) => ({
              in: 'header',
              name: h.name,
              required: !h.optional,
              description: h.description,
              schema: { type: 'string' },
            })),
          }
        : {}),
      ...(op.body
        ? { requestBody: { required: op.bodyRequired ?? true, content: { 'application/json': { schema: toSchema(op.body, 'input') } } } }
        : {}),
      responses,
    }
  }
  return {
    openapi: '3.0.3',
    info: { title: api.title, version: api.version, ...(api.description ? { description: api.description } : {}) },
    paths,
    ...(api.securitySchemes ? { components: { securitySchemes: api.securitySchemes } } : {}),
  }
}

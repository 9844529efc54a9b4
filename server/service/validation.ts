import type { Request } from 'express'
import { z } from 'zod'
import { describeIssues } from '../shared/contracts/zod-issues.ts'
import { badRequest } from './errors.ts'

/**
 * Validates a JSON body with a zod schema at the edge; every failure is a 400
 * with a message naming the field, never zod's raw text dump.
 * `optional`: a missing body counts as `{}` (endpoints whose body the spec makes optional).
 */
export function parseBody<S extends z.ZodType>(req: Request, schema: S, options: { optional?: boolean } = {}): z.infer<S> {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined
  if (hasBody && !req.is('application/json')) throw badRequest('Content-Type must be application/json')
  let body: unknown = req.body
  if (body === undefined || (!hasBody && isEmptyObject(body))) {
    if (!options.optional) throw badRequest('A JSON request body is required')
    body = {}
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object')
  const result = schema.safeParse(body)
  if (!result.success) throw badRequest(describeIssues(result.error.issues, { max: 3 }))
  return result.data
}

function isEmptyObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0
}

const INT64_MAX = 9223372036854775807n

/** A non-negative integer that fits JSON's exact range (larger int64 values cannot arrive intact). */
export const epochNumber = z.number().int('must be an integer').min(0, 'must not be negative').max(Number.MAX_SAFE_INTEGER, 'is too large')

/**
 * Attofil amounts: decimal strings of a non-negative int64-sized integer.
 * `abort` on the pattern: zod 4 runs later checks after a failed one, and
 * `BigInt("abc")` would throw (a 500) instead of the pattern's 400.
 */
export const attoAmount = z
  .string()
  .regex(/^(0|[1-9][0-9]*)$/, { message: 'must be a non-negative integer in a decimal string', abort: true })
  .refine((s) => s.length <= 40 && BigInt(s) <= INT64_MAX * 10n ** 18n, 'is too large')

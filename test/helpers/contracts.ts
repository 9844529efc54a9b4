import { expect } from 'vitest'
import type { z } from 'zod'

/**
 * A route's real answer against its contract schema. Parsing strips
 * undeclared keys, so equality means the answer has nothing undocumented and
 * lacks nothing required.
 */
export function expectToMatch(schema: z.ZodType, body: unknown): void {
  const parsed = schema.safeParse(body)
  expect(parsed.error?.issues ?? []).toEqual([])
  expect(parsed.data).toEqual(body)
}

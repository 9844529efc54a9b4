import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { describeIssues } from '../../../server/shared/contracts/zod-issues.ts'

const Body = z.strictObject({
  filePath: z.string().min(1).max(8),
  verbose: z.boolean().optional(),
  count: z.number().int().max(10).optional(),
  tags: z.array(z.string()).max(1).optional(),
  network: z.enum(['simnet', 'mainnet']).optional(),
  price: z.string().regex(/^\d+$/, 'must be a decimal string').optional(),
  contact: z.email().optional(),
})
const say = (input: unknown, options?: Parameters<typeof describeIssues>[1]) => describeIssues(Body.safeParse(input).error!.issues, options)

describe('describeIssues: one sentence per problem for every 400 envelope', () => {
  it.each([
    [{}, 'filePath is required'],
    [{ filePath: 1 }, 'filePath must be a string'],
    [{ filePath: '' }, 'filePath must not be empty'],
    [{ filePath: 'x'.repeat(9) }, 'filePath is too long'],
    [{ filePath: '/a', verbose: 'yes' }, 'verbose must be a boolean'],
    [{ filePath: '/a', count: 11 }, 'count is too large'],
    [{ filePath: '/a', tags: ['a', 'b'] }, 'tags is too long'],
    [{ filePath: '/a', tags: 'a' }, 'tags must be an array'],
    [{ filePath: '/a', network: 'moon' }, 'network must be one of: simnet, mainnet'],
    [{ filePath: '/a', price: 'ten' }, 'price must be a decimal string'],
    [{ filePath: '/a', user: 'bob' }, 'Unknown field: user'],
    [{ filePath: '/a', user: 'bob', role: 'admin' }, 'Unknown fields: user, role'],
    [[], 'The request body must be a JSON object'],
    [null, 'The request body must be a JSON object'],
  ])('%j → %s', (input, expected) => {
    expect(say(input)).toBe(expected)
  })

  it('names the subject of a non-object and lists up to `max` problems', () => {
    expect(say('text', { subject: 'The settings' })).toBe('The settings must be a JSON object')
    expect(say({ filePath: 1, verbose: 2, count: 'x' }, { max: 2 })).toBe('filePath must be a string; verbose must be a boolean')
  })

  it("never passes zod's own text through", () => {
    expect(say({ filePath: '/a', count: 1.5 })).toBe('count must be an integer')
    const message = say({ filePath: '/a', contact: 'nobody' })
    expect(message).toBe('contact is invalid')
    expect(message).not.toMatch(/expected|received|Invalid input/)
  })
})

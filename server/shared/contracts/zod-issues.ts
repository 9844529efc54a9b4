import type { z } from 'zod'

/** zod's article-less type names, as a person reads them. */
const A_TYPE: Record<string, string> = { object: 'an object', array: 'an array', int: 'an integer', integer: 'an integer' }

/**
 * One sentence per problem, naming the field, for every surface's 400
 * envelope: never zod's raw text. A schema's own messages are written as the
 * rest of a sentence ("must be a piece CID", "is too large") and are used as
 * they are; zod's defaults (capitalised, "Too big: expected …") are replaced
 * by a short phrase per issue code. At most `max` problems, joined by "; ".
 *
 * @example describeIssues(schema.safeParse({ filePath: 1 }).error.issues) // 'filePath must be a string'
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], options: { subject?: string; max?: number } = {}): string {
  const { subject = 'The request body', max = 1 } = options
  if (issues.length === 0) return `${subject} is invalid`
  return issues
    .slice(0, max)
    .map((issue) => describeIssue(issue, subject))
    .join('; ')
}

function describeIssue(issue: z.core.$ZodIssue, subject: string): string {
  if (issue.code === 'unrecognized_keys') return `Unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`
  if (issue.path.length === 0) return `${subject} must be a JSON object`
  const field = issue.path.map(String).join('.')
  // zod reports the input only when asked to; its default message says what it received.
  if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message)) return `${field} is required`
  // A schema's own message reads on from the field's name.
  if (/^[a-z]/.test(issue.message)) return `${field} ${issue.message}`
  if (issue.code === 'invalid_type') return `${field} must be ${A_TYPE[issue.expected] ?? `a ${issue.expected}`}`
  if (issue.code === 'too_big') return `${field} is too ${issue.origin === 'string' || issue.origin === 'array' ? 'long' : 'large'}`
  if (issue.code === 'too_small')
    return issue.origin === 'string' && issue.minimum === 1
      ? `${field} must not be empty`
      : `${field} is too ${issue.origin === 'string' || issue.origin === 'array' ? 'short' : 'small'}`
  if (issue.code === 'invalid_value') return `${field} must be one of: ${issue.values.map(String).join(', ')}`
  return `${field} is invalid`
}

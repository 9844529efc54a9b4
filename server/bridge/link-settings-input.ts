import { z } from 'zod'

/**
 * What an admin may send for the gateway link (plugin-ui/README.md). The
 * same rules as the admin page's own checks (plugin-ui/utils/validate-settings.ts);
 * the bridge is the authority.
 */

function httpUrlProblem(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an http:// or https:// URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL'
  if (url.username || url.password) return 'must not contain credentials (use gatewayUser and gatewayPassword)'
  return undefined
}

const optionalHttpUrl = z.string().trim().max(2048).superRefine((value, ctx) => {
  const problem = value === '' ? undefined : httpUrlProblem(value)
  if (problem) ctx.addIssue({ code: 'custom', message: problem })
}).transform((v) => v.replace(/\/+$/, ''))

export function pathMapProblem(pathMap: string): string | undefined {
  if (!pathMap.startsWith('/')) return 'must start with "/", for example /{user}'
  if (/[\\\0]/.test(pathMap) || pathMap.includes('//')) return 'must not contain "//", backslashes or NUL'
  if (pathMap.split('/').some((s) => s === '.' || s === '..')) return 'must not contain "." or ".." segments'
  if (/[{}]/.test(pathMap.replaceAll('{user}', ''))) return 'may only use the {user} placeholder'
  return undefined
}

/** A Nextcloud folder where the gateway is mounted: absolute, not the root, nothing that could step outside. */
export function mountPointProblem(mountPoint: string): string | undefined {
  if (!mountPoint.startsWith('/')) return 'must start with "/", for example /Filecoin'
  if (mountPoint.replace(/\/+$/, '') === '') return 'must name a folder, not the root of the user\'s files'
  if (/[\\\x00-\x1f\x7f]/.test(mountPoint) || mountPoint.replace(/\/+$/, '').includes('//')) return 'must not contain "//", backslashes or control characters'
  if (mountPoint.split('/').some((s) => s === '.' || s === '..')) return 'must not contain "." or ".." segments'
  return undefined
}

const MountInput = z.strictObject({
  mountPoint: z.string().trim().max(1024).superRefine((value, ctx) => {
    const problem = mountPointProblem(value)
    if (problem) ctx.addIssue({ code: 'custom', message: `mount point ${problem}` })
  }).transform((v) => v.replace(/\/+$/, '')),
  gatewayPath: z.string().trim().max(1024).superRefine((value, ctx) => {
    const problem = pathMapProblem(value)
    if (problem) ctx.addIssue({ code: 'custom', message: `gateway path ${problem}` })
  }),
})

const Mounts = z.array(MountInput).max(50).superRefine((mounts, ctx) => {
  const seen = new Set<string>()
  for (const m of mounts) {
    if (seen.has(m.mountPoint)) ctx.addIssue({ code: 'custom', message: `has ${m.mountPoint} twice` })
    seen.add(m.mountPoint)
  }
})

export const LinkSettingsInput = z.strictObject({
  gatewayUrl: optionalHttpUrl,
  gatewayUser: z.string().max(256).refine((v) => !/[:\x00-\x1f]/.test(v), 'must not contain ":" or control characters'),
  // Absent: keep the saved password; '' clears it.
  gatewayPassword: z.string().max(1024).refine((v) => !/[\x00-\x1f]/.test(v), 'must not contain control characters').optional(),
  pathMap: z.string().trim().max(1024).superRefine((value, ctx) => {
    const problem = pathMapProblem(value)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  }),
  network: z.enum(['simnet', 'mainnet', 'calibration', 'devnet'], { error: 'must be simnet, mainnet, calibration or devnet' }),
  ipfsGateway: optionalHttpUrl,
  // Absent: keep the saved mounts (admin pages that predate them still save).
  mounts: Mounts.optional(),
})
export type LinkSettingsInput = z.infer<typeof LinkSettingsInput>

/** "Test the link" may try settings before they are saved: any subset, over the saved ones. */
export const LinkTestInput = LinkSettingsInput.partial()
export type LinkTestInput = z.infer<typeof LinkTestInput>

/** One short sentence naming the field: never raw zod text. */
export function describeSettingsProblem(error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'Invalid settings'
  if (issue.code === 'unrecognized_keys') return `Unknown field(s): ${issue.keys.join(', ')}`
  if (issue.path.length === 0) return 'The body must be a JSON object of gateway link settings'
  const field = String(issue.path[0])
  if (issue.code === 'invalid_type') return issue.input === undefined ? `${field} is required` : `${field} must be a ${issue.expected}`
  if (issue.code === 'too_big') return `${field} is too long`
  if (issue.code === 'custom' || issue.code === 'invalid_value') return `${field} ${issue.message}`
  return `${field} is invalid`
}

import { z } from 'zod'
import { DealMarketStandingSchema, OnchainCloudStandingSchema } from './gateway-status.ts'
import { NETWORK_NAMES } from './network.ts'

/**
 * The admin page's API (plugin-ui/README.md, "Admin settings"): what an admin
 * may send for the gateway link, what comes back (never the password, only
 * whether one is set), and what "Test the link" answers. The input rules are
 * the admin page's own checks (plugin-ui/utils/validate-settings.ts) and more;
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

const optionalHttpUrl = z
  .string()
  .trim()
  .max(2048)
  .superRefine((value, ctx) => {
    const problem = value === '' ? undefined : httpUrlProblem(value)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })
  .transform((v) => v.replace(/\/+$/, ''))

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
  if (mountPoint.replace(/\/+$/, '') === '') return "must name a folder, not the root of the user's files"
  if (/[\\\x00-\x1f\x7f]/.test(mountPoint) || mountPoint.replace(/\/+$/, '').includes('//'))
    return 'must not contain "//", backslashes or control characters'
  if (mountPoint.split('/').some((s) => s === '.' || s === '..')) return 'must not contain "." or ".." segments'
  return undefined
}

const MountInput = z.strictObject({
  mountPoint: z
    .string()
    .trim()
    .max(1024)
    .superRefine((value, ctx) => {
      const problem = mountPointProblem(value)
      if (problem) ctx.addIssue({ code: 'custom', message: `mount point ${problem}` })
    })
    .transform((v) => v.replace(/\/+$/, '')),
  gatewayPath: z
    .string()
    .trim()
    .max(1024)
    .superRefine((value, ctx) => {
      const problem = pathMapProblem(value)
      if (problem) ctx.addIssue({ code: 'custom', message: `gateway path ${problem}` })
    }),
})

const Mounts = z
  .array(MountInput)
  .max(50)
  .superRefine((mounts, ctx) => {
    const seen = new Set<string>()
    for (const m of mounts) {
      if (seen.has(m.mountPoint)) ctx.addIssue({ code: 'custom', message: `has ${m.mountPoint} twice` })
      seen.add(m.mountPoint)
    }
  })

export const LinkSettingsInput = z.strictObject({
  gatewayUrl: optionalHttpUrl,
  gatewayUser: z
    .string()
    .max(256)
    .refine((v) => !/[:\x00-\x1f]/.test(v), 'must not contain ":" or control characters'),
  // Absent: keep the saved password; '' clears it.
  gatewayPassword: z
    .string()
    .max(1024)
    .refine((v) => !/[\x00-\x1f]/.test(v), 'must not contain control characters')
    .optional(),
  pathMap: z
    .string()
    .trim()
    .max(1024)
    .superRefine((value, ctx) => {
      const problem = pathMapProblem(value)
      if (problem) ctx.addIssue({ code: 'custom', message: problem })
    }),
  network: z.enum(NETWORK_NAMES, { error: `must be ${NETWORK_NAMES.slice(0, -1).join(', ')} or ${NETWORK_NAMES.at(-1)}` }),
  ipfsGateway: optionalHttpUrl,
  // Absent: keep the saved mounts (admin pages that predate them still save).
  mounts: Mounts.optional(),
})
export type LinkSettingsInput = z.infer<typeof LinkSettingsInput>

/** "Test the link" may try settings before they are saved: any subset, over the saved ones. */
export const LinkTestInput = LinkSettingsInput.partial()
export type LinkTestInput = z.infer<typeof LinkTestInput>

export const MountSettingSchema = z.object({
  mountPoint: z.string().describe('Nextcloud folder where the gateway is mounted (External Storage), e.g. /Filecoin'),
  gatewayPath: z.string().describe("Gateway folder behind it; {user} stands for the user's id"),
})

export const PublicLinkSettingsSchema = z.object({
  gatewayUrl: z.string().describe("'': the gateway of the app's own configuration"),
  gatewayUser: z.string(),
  gatewayPasswordSet: z.boolean().describe('The password itself is never returned'),
  pathMap: z.string(),
  network: z.enum(NETWORK_NAMES),
  ipfsGateway: z.string(),
  mounts: z.array(MountSettingSchema),
})

export const AdminSettingsResponseSchema = z.object({
  success: z.literal(true),
  settings: PublicLinkSettingsSchema,
})

export const LinkCheckSchema = z.object({
  id: z
    .string()
    .describe(
      'server-gateway: the bridge reaches the gateway; funds-market / funds-onchain-cloud: that route is paid for; browser-ocs: added by the admin page',
    ),
  ok: z.boolean(),
  sentence: z.string().describe('What was found, and when not ok, what to do, in one sentence'),
})

export const LinkTestResultSchema = z.object({
  success: z.boolean().describe('Whether the gateway answered as a gateway should (a /file-info envelope, credentials accepted)'),
  status: z.number().int().describe('Its HTTP status; 0 when it could not be reached'),
  message: z.string(),
  latencyMs: z.number(),
  warning: z
    .string()
    .optional()
    .describe('The link works, but the gateway says (its POST /status) it serves another network than the settings name'),
  dealKind: z
    .string()
    .optional()
    .describe(
      'Which deals the gateway proposes now (its POST /status): verified, or unverified and why (from network version 29, FIP-0118, there are no verified deals)',
    ),
  dealsWarning: z
    .string()
    .optional()
    .describe('The link works, but the gateway says (its POST /status) it proposes no deals, and why: no DataCap, no escrow'),
  onchainCloud: OnchainCloudStandingSchema.optional().describe(
    "The gateway's Filecoin Onchain Cloud account for PDP copies, when it stores there (its POST /status)",
  ),
  dealMarket: DealMarketStandingSchema.optional().describe("What pays for the gateway's deal-market copies (its POST /status)"),
  nextGroup: z
    .array(
      z.object({
        route: z.string().describe('The route in words: "the deal market" or "Filecoin Onchain Cloud (PDP)"'),
        copies: z.number().int().min(0).describe('Copies of the next group it will make; 0: none now'),
        price: z.string().optional().describe('The most a copy costs, e.g. "at most 0.5 FIL per TiB-month (about 1.75 USD)"'),
        why: z.string(),
      }),
    )
    .optional()
    .describe('Which routes will store the next group, at what price per TiB-month and why (its POST /status)'),
  checks: z
    .array(LinkCheckSchema)
    .optional()
    .describe("One verdict per thing the deployment needs: the bridge reaching the gateway, then each route's funds"),
})

export type MountSetting = z.infer<typeof MountSettingSchema>
export type PublicLinkSettings = z.infer<typeof PublicLinkSettingsSchema>
export type AdminSettingsResponse = z.infer<typeof AdminSettingsResponseSchema>
export type LinkTestResult = z.infer<typeof LinkTestResultSchema>
export type LinkCheck = z.infer<typeof LinkCheckSchema>

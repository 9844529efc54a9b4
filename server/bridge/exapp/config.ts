/**
 * What an AppAPI external app (ExApp) is told at deploy, by AppAPI's
 * conventions: the daemon passes APP_ID, APP_SECRET, APP_VERSION, APP_HOST,
 * APP_PORT and NEXTCLOUD_URL as environment variables (for the manual-install
 * daemon the admin sets them, to the values given to `occ app_api:app:register
 * --json-info`). AA_VERSION (AppAPI's own version) is sent with each request
 * instead, so it is not read here.
 */
import { z } from 'zod'

const ExAppEnvSchema = z.object({
  APP_ID: z.string().regex(/^[a-z][a-z0-9_]*$/, 'an app id: lower-case letters, digits and _'),
  // AppAPI generates 128 characters (lib/Command/ExApp/Register.php); a short one is a mistake, not a choice.
  APP_SECRET: z.string().min(16, 'at least 16 characters'),
  APP_VERSION: z.string().regex(/^\d+\.\d+\.\d+/, 'a version like 1.2.3'),
  APP_HOST: z.string().min(1).default('127.0.0.1'),
  APP_PORT: z.coerce.number().int().min(1).max(65535),
  NEXTCLOUD_URL: z.url({ protocol: /^https?$/ }),
})

export interface ExAppConfig {
  appId: string
  secret: string
  version: string
  host: string
  port: number
  /** Without a trailing slash. */
  nextcloudUrl: string
}

/** The ExApp's settings from the environment, or an error naming every variable that is missing or wrong. */
export function parseExAppEnv(env: NodeJS.ProcessEnv): ExAppConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''))
  const parsed = ExAppEnvSchema.safeParse(cleaned)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`)
    throw new Error(`Invalid AppAPI configuration (FILESYNC=appapi):\n${lines.join('\n')}`)
  }
  const e = parsed.data
  return {
    appId: e.APP_ID,
    secret: e.APP_SECRET,
    version: e.APP_VERSION,
    host: e.APP_HOST,
    port: e.APP_PORT,
    nextcloudUrl: e.NEXTCLOUD_URL.replace(/\/+$/, ''),
  }
}

import express, { Router, type RequestHandler } from 'express'
import { badRequest } from '../errors.ts'
import type { AdminSettingsResponse, LinkTestResult } from '../../shared/contracts/admin-settings.ts'
import { LinkSettingsInput, LinkTestInput } from '../../shared/contracts/admin-settings.ts'
import { describeIssues } from '../../shared/contracts/zod-issues.ts'
import { testGatewayLink } from '../link-test.ts'
import { appSurface, requireAdmin, requireJsonBody, requireOcsApiRequest } from '../ocs-guards.ts'
import { toPublicSettings, type GatewayLinkSettings, type SettingsStore } from '../settings-store.ts'

export const ADMIN_SETTINGS_ROUTE = '/ocs/v2.php/apps/gateway/admin/settings'
export const TEST_LINK_ROUTE = '/ocs/v2.php/apps/gateway/admin/test-link'

export interface AdminSettingsDeps {
  /** Basic auth or a browser session. */
  auth: RequestHandler
  settings: SettingsStore
}

/** Merges input over saved settings: an absent password keeps the saved one, '' clears it. */
function merge(saved: GatewayLinkSettings, input: Partial<LinkSettingsInput>): GatewayLinkSettings {
  const { gatewayPassword, ...rest } = input
  const next: GatewayLinkSettings = { ...saved, ...rest, mounts: rest.mounts ?? saved.mounts }
  if (gatewayPassword !== undefined) next.gatewayPassword = gatewayPassword === '' ? undefined : gatewayPassword
  if (next.gatewayPassword === undefined) delete next.gatewayPassword
  return next
}

/**
 * The admin page's API (plugin-ui/README.md): read and save the gateway link,
 * and test it. Checks run auth → CSRF → admin → body; secrets never go back.
 */
export function createAdminSettingsRouter(deps: AdminSettingsDeps): Router {
  const router = Router()
  const guards = [appSurface, deps.auth, requireOcsApiRequest, requireAdmin]
  const json = express.json({ limit: '64kb' })
  const answer = (s: GatewayLinkSettings): AdminSettingsResponse => ({
    success: true,
    settings: toPublicSettings(s, deps.settings.effective(s)),
  })

  router.get(ADMIN_SETTINGS_ROUTE, ...guards, (_req, res) => {
    res.json(answer(deps.settings.get()))
  })

  router.put(ADMIN_SETTINGS_ROUTE, ...guards, requireJsonBody, json, async (req, res) => {
    const input = LinkSettingsInput.safeParse(req.body)
    if (!input.success) throw badRequest(describeIssues(input.error.issues, { subject: 'The settings' }))
    const next = merge(deps.settings.get(), input.data)
    await deps.settings.save(next)
    res.json(answer(next))
  })

  router.post(TEST_LINK_ROUTE, ...guards, requireJsonBody, json, async (req, res) => {
    // No body, or settings to try before saving them.
    const input = LinkTestInput.safeParse(req.body ?? {})
    if (!input.success) throw badRequest(describeIssues(input.error.issues, { subject: 'The settings' }))
    const candidate = merge(deps.settings.get(), input.data)
    const result: LinkTestResult = await testGatewayLink(deps.settings.effective(candidate))
    res.json(result)
  })

  return router
}

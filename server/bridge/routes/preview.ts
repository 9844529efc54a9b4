import express, { Router, type Request, type Response } from 'express'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { LoginThrottle } from '../auth/throttle.ts'
import { SESSION_COOKIE, requestTokenMatches, sessionOf } from '../auth/session-auth.ts'
import { adminPage, APP_ASSETS, filesPage, loginPage, messagePage, PREVIEW_ASSETS } from '../preview/page.ts'
import type { SessionStore } from '../sessions.ts'
import type { User, UserStore } from '../users.ts'

export interface PreviewDeps {
  users: UserStore
  sessions: SessionStore
  throttle: LoginThrottle
  /** The app's built front end (`npm run build` → js/). */
  bundleDir: string
  /** The linked network as the header names it (`networkLabel`). */
  network: () => string
}

const ASSETS_DIR = join(import.meta.dirname, '..', 'preview', 'assets')
// Scripts only from here; Vue components inject <style> elements, hence inline styles.
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"

/** Only paths on this site, never `//host` or `/\host` (open redirects). */
const safeRedirect = (value: unknown) => (typeof value === 'string' && /^\/(?![/\\])/.test(value) && value.length < 2048 ? value : '/')

function sendPage(res: Response, status: number, html: string): void {
  res.status(status).set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': CSP, 'X-Frame-Options': 'DENY' }).type('html').send(html)
}

/**
 * The preview page of the embedded default (DESIGN.md): `/` logs a user in
 * with a session cookie and lists their files; the app's own built bundle
 * shows its sidebar tab there, and `/settings/admin/gateway` hosts the admin
 * page. Also `GET /index.php/csrftoken`, which @nextcloud/axios calls to renew
 * a request token after a 412.
 */
export function createPreviewRouter(deps: PreviewDeps): Router {
  const router = Router()
  const bundleBuilt = () => existsSync(join(deps.bundleDir, 'gateway-init.mjs'))
  const form = express.urlencoded({ extended: false, limit: '16kb' })
  const cookie = (req: Request) => ({ httpOnly: true, sameSite: 'lax' as const, secure: req.secure, path: '/' })
  const loggedIn = async (req: Request): Promise<{ id: string; user: User; requestToken: string } | undefined> => {
    const found = await sessionOf(req, deps.sessions)
    const user = found && (await deps.users.get(found.session.userId))
    return found && user ? { id: found.id, user, requestToken: found.session.requestToken } : undefined
  }

  // A file that is not there falls through to the bridge's JSON 404.
  router.use(PREVIEW_ASSETS, express.static(ASSETS_DIR, { index: false }))
  router.use(`${APP_ASSETS}/js`, express.static(deps.bundleDir, { index: false }))

  router.get('/', async (req, res) => {
    const login = await loggedIn(req)
    if (!login) return sendPage(res, 200, loginPage({}))
    sendPage(
      res,
      200,
      filesPage({ user: login.user, requestToken: login.requestToken, bundleBuilt: bundleBuilt(), network: deps.network() }),
    )
  })

  router.get('/settings/admin/gateway', async (req, res) => {
    const login = await loggedIn(req)
    if (!login) return sendPage(res, 200, loginPage({ redirect: '/settings/admin/gateway' }))
    if (!login.user.isAdmin) return sendPage(res, 403, messagePage('Access denied', 'Only administrators can see these settings.'))
    sendPage(
      res,
      200,
      adminPage({ user: login.user, requestToken: login.requestToken, bundleBuilt: bundleBuilt(), network: deps.network() }),
    )
  })

  router.post('/login', form, async (req, res) => {
    // A login form posted from another site is refused (login CSRF).
    // `Origin: null` (a sandboxed frame, a redirect through another site, a data: URL) and an empty one name no site: foreign too.
    // Without an Origin (older browsers, some privacy settings), a Referer from another site says the same.
    const origin = req.headers.origin ?? req.headers.referer
    if (origin !== undefined && originHost(origin) !== req.headers.host) {
      return sendPage(res, 403, messagePage('Access denied', 'This login form was sent from another site.'))
    }
    const body = (req.body ?? {}) as Record<string, unknown>
    const login = typeof body.user === 'string' ? body.user.trim() : ''
    const password = typeof body.password === 'string' ? body.password : ''
    const redirect = safeRedirect(body.redirect_url)
    if (!login || !password || login.length > 256 || password.length > 1024) {
      return sendPage(res, 400, loginPage({ error: 'Enter your user name and password.', user: login.slice(0, 256), redirect }))
    }
    const address = req.ip ?? 'unknown'
    const tried = await deps.throttle.attempt(address, login, () => deps.users.verify(login, password))
    if (!('value' in tried)) {
      res.set('Retry-After', String(tried.retryAfter))
      return sendPage(res, 429, loginPage({ error: `Too many failed logins; try again in ${tried.retryAfter} s.`, user: login, redirect }))
    }
    const user = tried.value
    if (!user) return sendPage(res, 401, loginPage({ error: 'Wrong user name or password.', user: login, redirect }))
    const { id, session } = await deps.sessions.create(user.id)
    res.cookie(SESSION_COOKIE, id, { ...cookie(req), expires: new Date(session.expiresMs) })
    res.redirect(303, redirect)
  })

  router.post('/logout', form, async (req, res) => {
    const found = await sessionOf(req, deps.sessions)
    const token = (req.body as Record<string, unknown> | undefined)?.requesttoken
    if (found) {
      // The request token (form field or header) proves the page itself asked.
      if (typeof token === 'string') req.headers.requesttoken ??= token
      if (!requestTokenMatches(req, found.session)) return sendPage(res, 412, messagePage('Not logged out', 'CSRF check failed.'))
      await deps.sessions.destroy(found.id)
    }
    res.clearCookie(SESSION_COOKIE, cookie(req))
    res.redirect(303, '/')
  })

  router.get(['/index.php/csrftoken', '/csrftoken'], async (req, res) => {
    const login = await loggedIn(req)
    res.set('Cache-Control', 'no-store')
    if (!login) return void res.status(401).json({ success: false, error: 'Not logged in' })
    res.json({ token: login.requestToken })
  })

  return router
}

/** The host of an `Origin` header; undefined when it is not a URL (a hostile or broken client). */
function originHost(origin: string): string | undefined {
  return URL.canParse(origin) ? new URL(origin).host : undefined
}

import express from 'express'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startServer, type RunningServer } from '../../server/shared/http.ts'

const FIXTURES = join(import.meta.dirname, 'fixtures', 'nextcloud')
const json = (name: string) =>
  JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as { status: number; headers: Record<string, string>; body: unknown }
const xml = (name: string) => readFileSync(join(FIXTURES, name), 'utf8')

/** The instance's session cookie name (Nextcloud names it after its instance id). */
export const SESSION_COOKIE_NAME = 'ocstandin42'

export interface StandInUser {
  id: string
  password: string
  displayName: string
  groups: string[]
  files: string[]
}
export interface StandInSession {
  user: string
  requestToken: string
  expired?: boolean
}
export interface SeenRequest {
  method: string
  url: string
  headers: Record<string, string | string[] | undefined>
}

export interface NextcloudStandIn extends RunningServer {
  users: Map<string, StandInUser>
  sessions: Map<string, StandInSession>
  seen: SeenRequest[]
  maintenance: boolean
  /** Answers nothing to cloud/user while set (timeouts). */
  hang: boolean
  /** Cookie header and requesttoken of a new live session for a user. */
  login(user: string): { cookie: string; requestToken: string; id: string }
}

/**
 * A Nextcloud on loopback for the parts of it the bridge talks to:
 * `cloud/user`, Depth 0 PROPFIND in `remote.php/dav/files/<user>/` and
 * `status.php`, answering with the recorded responses in fixtures/nextcloud.
 */
export async function startNextcloudStandIn(users: StandInUser[]): Promise<NextcloudStandIn> {
  const state = {
    users: new Map(users.map((u) => [u.id, u])),
    sessions: new Map<string, StandInSession>(),
    seen: [] as SeenRequest[],
    maintenance: false,
    hang: false,
  }
  let counter = 0
  const app = express()
  app.use((req, _res, next) => {
    state.seen.push({ method: req.method, url: req.originalUrl, headers: { ...req.headers } })
    next()
  })
  const send = (res: express.Response, f: { status: number; headers: Record<string, string>; body: unknown }) => {
    res
      .status(f.status)
      .set(f.headers)
      .send(typeof f.body === 'string' ? f.body : JSON.stringify(f.body))
  }
  const sessionOf = (req: express.Request) => {
    const match = new RegExp(`(?:^|;\\s*)${SESSION_COOKIE_NAME}=([^;]+)`).exec(String(req.headers.cookie ?? ''))
    return match ? { id: match[1], session: state.sessions.get(match[1]) } : undefined
  }
  /** Who the request is, as Nextcloud's login chain decides: basic auth first, then the session cookie. */
  const whoIs = (req: express.Request): { user?: StandInUser; viaSession: boolean } => {
    const auth = req.headers.authorization
    if (auth) {
      const m = /^Basic (.+)$/.exec(auth)
      const [login, password] = m ? Buffer.from(m[1], 'base64').toString('utf8').split(/:(.*)/s) : []
      const user = login ? state.users.get(login) : undefined
      return { user: user && user.password === password ? user : undefined, viaSession: false }
    }
    const s = sessionOf(req)
    const user = s?.session && !s.session.expired ? state.users.get(s.session.user) : undefined
    return { user, viaSession: true }
  }
  const tokenOk = (req: express.Request) => {
    const s = sessionOf(req)?.session
    return s !== undefined && req.headers.requesttoken === s.requestToken
  }

  app.get('/status.php', (_req, res) => send(res, json(state.maintenance ? 'status-maintenance.json' : 'status.json')))

  app.get('/ocs/v2.php/cloud/user', (req, res) => {
    if (state.hang) return
    if (state.maintenance) return send(res, json('maintenance.json'))
    const { user, viaSession } = whoIs(req)
    if (!user) return send(res, json('cloud-user-unauthorised.json'))
    // A session on an OCS route passes Nextcloud's CSRF check with a valid requesttoken or `OCS-APIRequest: true`.
    if (viaSession && !tokenOk(req) && req.headers['ocs-apirequest'] !== 'true') return send(res, json('csrf-check-failed.json'))
    const f = json('cloud-user-ok.json')
    const text = JSON.stringify(f.body)
      .replaceAll('__USER__', user.id)
      .replaceAll('__DISPLAY__', user.displayName)
      .replace('"__GROUPS__"', JSON.stringify(user.groups))
    send(res, { ...f, body: text })
  })

  app.use('/remote.php/dav/files', (req, res) => {
    if (state.maintenance) return send(res, json('maintenance.json'))
    const { user, viaSession } = whoIs(req)
    if (!user) return send(res, json('cloud-user-unauthorised.json'))
    // Sabre's Auth plugin: a session making a non-GET request needs its requesttoken.
    if (viaSession && req.method !== 'GET' && !tokenOk(req))
      return void res.status(401).type('application/xml; charset=utf-8').send(xml('propfind-csrf.xml'))
    const [owner, ...rest] = req.path.split('/').filter(Boolean).map(decodeURIComponent)
    const path = '/' + rest.join('/')
    const notFound = () =>
      res.status(404).type('application/xml; charset=utf-8').send(xml('propfind-not-found.xml').replace('__NAME__', path))
    if (req.method !== 'PROPFIND') return void res.status(405).end()
    if (owner !== user.id) return notFound()
    const known = path === '/' || user.files.some((f) => f === path || f.startsWith(path + '/'))
    if (!known) return notFound()
    res.status(207).type('application/xml; charset=utf-8').send(xml('propfind-file.xml').replace('__HREF__', req.originalUrl))
  })

  const server = await startServer(app, 0)
  const close = server.close
  const standIn = Object.assign(
    server,
    { users: state.users, sessions: state.sessions, seen: state.seen },
    {
      close: (grace = 50) => close(grace),
      login(user: string) {
        const id = `sess${++counter}x${Math.random().toString(36).slice(2)}`
        const requestToken = `tok${counter}:${Math.random().toString(36).slice(2)}`
        state.sessions.set(id, { user, requestToken })
        return {
          id,
          requestToken,
          cookie: `oc_sessionPassphrase=pp${counter}; ${SESSION_COOKIE_NAME}=${id}; nc_sameSiteCookielax=true; nc_sameSiteCookiestrict=true`,
        }
      },
    },
  )
  // Switches the tests flip, read live by the handlers above.
  Object.defineProperties(standIn, {
    maintenance: { get: () => state.maintenance, set: (v: boolean) => (state.maintenance = v), enumerable: true },
    hang: { get: () => state.hang, set: (v: boolean) => (state.hang = v), enumerable: true },
  })
  return standIn as unknown as NextcloudStandIn
}

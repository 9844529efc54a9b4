import { Router, type RequestHandler } from 'express'
import { currentUser, hasUser } from '../auth/caller.ts'
import { setSurface } from '../errors.ts'
import { renderOcs } from '../ocs.ts'

/** The Nextcloud release whose client-facing surface we imitate. */
export const NEXTCLOUD_VERSION = { major: 31, minor: 0, micro: 5, string: '31.0.5', full: '31.0.5.1' }

export interface NextcloudStatusDeps {
  /** Requires credentials. */
  auth: RequestHandler
  /** Checks credentials when sent, lets anonymous requests through. */
  optionalAuth: RequestHandler
}

const ocsSurface: RequestHandler = (req, _res, next) => {
  setSurface(req, 'ocs')
  next()
}

function capabilities(authenticated: boolean) {
  const files = {
    bigfilechunking: true,
    blacklisted_files: ['.htaccess'],
    forbidden_filenames: ['.htaccess'],
    forbidden_filename_characters: ['\\', '/'],
    forbidden_filename_extensions: [],
    undelete: false,
    versioning: false,
    comments: false,
  }
  return {
    version: {
      major: NEXTCLOUD_VERSION.major,
      minor: NEXTCLOUD_VERSION.minor,
      micro: NEXTCLOUD_VERSION.micro,
      string: NEXTCLOUD_VERSION.string,
      edition: '',
      extendedSupport: false,
    },
    capabilities: {
      core: {
        pollinterval: 60,
        'webdav-root': 'remote.php/webdav',
        'reference-api': false,
        'reference-regex': '',
        'mod-rewrite-working': false,
      },
      bruteforce: { delay: 0, 'allow-listed': false },
      // Nextcloud shows anonymous callers only what is needed to log in.
      ...(authenticated ? { files, dav: { chunking: '1.0' } } : { dav: { chunking: '1.0' } }),
    },
  }
}

/** `status.php`, OCS capabilities and the current user: what Nextcloud clients ask before syncing. */
export function createNextcloudStatusRouter(deps: NextcloudStatusDeps): Router {
  const router = Router()

  router.get('/status.php', (_req, res) => {
    res.json({
      installed: true,
      maintenance: false,
      needsDbUpgrade: false,
      version: NEXTCLOUD_VERSION.full,
      versionstring: NEXTCLOUD_VERSION.string,
      edition: '',
      productname: 'Nextcloud',
      extendedSupport: false,
    })
  })

  router.get(['/ocs/v1.php/cloud/capabilities', '/ocs/v2.php/cloud/capabilities'], ocsSurface, deps.optionalAuth, (req, res) => {
    renderOcs(req, res, { status: 200, data: capabilities(hasUser(res)) })
  })

  router.get(['/ocs/v1.php/cloud/user', '/ocs/v2.php/cloud/user'], ocsSurface, deps.auth, (req, res) => {
    const user = currentUser(res)
    renderOcs(req, res, {
      status: 200,
      data: {
        id: user.id,
        'display-name': user.displayName,
        displayname: user.displayName,
        email: null,
        enabled: true,
        // -3 is Nextcloud's "unlimited"; usage is not tracked by the bridge.
        quota: { free: -3, used: 0, total: -3, relative: 0, quota: -3 },
        groups: user.isAdmin ? ['admin'] : [],
        language: 'en',
        locale: '',
        backend: 'Database',
      },
    })
  })

  return router
}

import type { ServerResponse } from 'node:http'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import { FolderStatesRequestSchema, type FolderEntry, type FolderStatesResponse } from '../../shared/contracts/folder-states.ts'
import { etagOf, namesEtag } from '../../shared/etag.ts'
import type { Authenticate, Caller } from '../auth/caller.ts'
import { folderEntryOfRecord } from '../convert.ts'
import { createFolderStatesCache, createPerUserLimit, type WholeAnswer } from '../folder-states-cache.ts'
import { acceptsGzip } from '../accept-encoding.ts'
import { BridgeError } from '../errors.ts'
import type { GatewayClient } from '../gateway-client.ts'
import { normaliseUserPath, splitPath } from '../user-path.ts'
import { readOcsPost } from './ocs-post.ts'
import type { BridgeRoute } from '../fast-lane.ts'

const gzipAsync = promisify(gzip)

export const FOLDER_STATES_ROUTE = '/ocs/v2.php/apps/gateway/get-folder-states'
const BODY_LIMIT = 64 * 1024

export interface FolderStatesDeps {
  authenticate: Authenticate
  gateway: GatewayClient
  /** Where a caller's path lives on the gateway; throws (404) for a path the caller may not ask about. */
  toGatewayPath: (caller: Caller, userPath: string) => Promise<string>
  /**
   * The mount points directly inside a user folder that lies on no mount
   * (FILESYNC=nextcloud: `/Filecoin` in the user's root); none by default.
   */
  mountPointsIn?: (caller: Caller, userPath: string) => string[]
  /** Where retrievable entries open on IPFS, when the linked network publishes data; undefined otherwise. */
  ipfsGateway: () => string | undefined
}

/**
 * `POST /ocs/v2.php/apps/gateway/get-folder-states`: the badges of one Files
 * listing in one request, checked in the metadata route's order (auth →
 * throttle → CSRF → body → path). A folder the gateway does not know, or a
 * gateway without folder states, answers no entries: the list shows no badges.
 *
 * Its cost follows what is shown, not the folder's size: the gateway's answer
 * is kept (folder-states-cache.ts) and re-asked with its ETag, `names` picks
 * the rows on screen out of it, a whole answer is written (and gzipped) once per change,
 * and the answer's own ETag lets a poller's unchanged answer be a 304.
 */
export function createFolderStatesRoute(deps: FolderStatesDeps): BridgeRoute {
  const cache = createFolderStatesCache({ gateway: deps.gateway })
  const limited = createPerUserLimit({ running: 2, waiting: 64 })
  return async (req, res, ctx) => {
    const { caller, body } = await readOcsPost(req, ctx, deps.authenticate, FolderStatesRequestSchema, BODY_LIMIT)
    const userPath = normaliseUserPath(body.folderPath, { encoding: 'literal', userId: caller.user.id })
    await limited(caller.user.id, async () => {
      const ipfsGateway = deps.ipfsGateway() ?? ''
      const { entries, etag, whole } = await entriesOf(caller, userPath, body.names, ipfsGateway)
      if (etag) res.setHeader('etag', etag)
      if (etag && namesEtag(req.headers['if-none-match'], etag)) return void res.writeHead(304).end()
      const gzip = whole !== undefined && acceptsGzip(req.headers['accept-encoding'])
      const bytes = whole ? await (gzip ? gzipped(whole) : whole.json) : Buffer.from(answerText(userPath, entries, ipfsGateway))
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': bytes.length,
        ...(whole ? { vary: 'Accept-Encoding' } : {}),
        ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      })
      res.end(bytes)
      // The user's place is given back once the answer has left, not when it was handed over:
      // one user's pollers of a large folder share their two places' bandwidth, not everyone's.
      await delivered(res)
    })
  }

  /** The entries to show, the answer's ETag when the gateway gives one, and the kept whole answer when the folder is asked whole. */
  async function entriesOf(
    caller: Caller,
    userPath: string,
    names: string[] | undefined,
    ipfsGateway: string,
  ): Promise<{ entries: FolderEntry[]; etag?: string; whole?: WholeAnswer }> {
    let gatewayPath: string
    try {
      gatewayPath = await deps.toGatewayPath(caller, userPath)
    } catch (err) {
      if (!(err instanceof BridgeError) || err.status !== 404) throw err
      const points = await mountPointEntries(caller, userPath)
      return { entries: names ? points.filter((e) => names.includes(e.name)) : points }
    }
    const folder = await cache.get(gatewayPath)
    if (!folder) return { entries: [] }
    const etag = folder.etag && etagOf(folder.etag, userPath, ipfsGateway, ...(names ? ['names', ...names] : []))
    if (names) return { entries: [...new Set(names)].flatMap((n) => folder.byName.get(n) ?? []), ...(etag ? { etag } : {}) }
    // An answer the gateway gives no ETag for is not kept: it is written for this request alone, and not gzipped.
    if (!etag) return { entries: folder.entries }
    const key = `${userPath}\0${ipfsGateway}`
    if (folder.whole?.key !== key) folder.whole = { key, json: Buffer.from(answerText(userPath, folder.entries, ipfsGateway)) }
    return { entries: folder.entries, whole: folder.whole, etag }
  }

  /** A folder on no mount shows badges only on the mount points inside it, each from its own record. */
  async function mountPointEntries(caller: Caller, userPath: string): Promise<FolderEntry[]> {
    const entries: FolderEntry[] = []
    for (const point of deps.mountPointsIn?.(caller, userPath) ?? []) {
      try {
        entries.push(folderEntryOfRecord(splitPath(point)[1], await deps.gateway.fileInfo(await deps.toGatewayPath(caller, point))))
      } catch (err) {
        // A mount the caller cannot see, or not on the gateway yet: no badge, like any unknown entry.
        if (!(err instanceof BridgeError) || err.status !== 404) throw err
      }
    }
    return entries
  }
}

function answerText(path: string, entries: FolderEntry[], ipfsGateway: string): string {
  return JSON.stringify({
    success: true,
    folder: { path, entries, ...(ipfsGateway ? { ipfsGateway } : {}) },
  } satisfies FolderStatesResponse)
}

/** The whole answer gzipped, once per change: a 5 000-entry folder's 654 KB is 187 KB on the wire (npm run bench -- --only badges). */
function gzipped(whole: WholeAnswer): Promise<Buffer> {
  whole.gzipped ??= gzipAsync(whole.json)
  return whole.gzipped
}

/** Resolves when the response has been handed to the OS whole, or was cut. */
function delivered(res: ServerResponse): Promise<void> {
  if (res.writableFinished || res.destroyed) return Promise.resolve()
  return new Promise((resolve) => {
    res.once('finish', resolve)
    res.once('close', resolve)
  })
}

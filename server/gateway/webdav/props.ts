import type { Request } from 'express'
import { nameOf, type Entry } from '../namespace.ts'
import type { DavContext } from './context.ts'
import { contentTypeFor, DEFAULT_TYPE } from './content-type.ts'
import { covers, type Lock } from './locks.ts'
import { hrefOf } from './paths.ts'
import { quoteEtag } from './preconditions.ts'
import { DAV, GW, OC, dav, el, type XmlElement, type XmlNode } from './xml.ts'

/**
 * What describing a listing needs beyond its entries, read from the store
 * beforehand in a few queries (not a few per entry), so a folder of
 * thousands is described without waiting on the store.
 */
export interface PropView {
  instanceId: string
  /** Dead properties of a listed path. */
  dead(path: string): XmlElement[]
  /** Live locks that apply to a listed path. */
  locksOn(path: string): Lock[]
  /** Total file bytes below a listed folder. */
  folderSize(path: string): number
  /** Whether a lock's root is a folder (for its href). */
  isDir(path: string): boolean
}

/** Live properties: computed from the namespace and lock store, never stored, never writable. */
interface LiveProp {
  ns: string
  local: string
  /** The value's children, or undefined when the resource has no such property. */
  value(entry: Entry, req: Request, view: PropView): XmlNode[] | undefined
  /** Only when asked by name (not in `allprop`), as Nextcloud does for its own properties. */
  named?: true
}

const file = (entry: Entry, v: () => XmlNode[]) => (entry.kind === 'file' ? v() : undefined)

const LIVE: LiveProp[] = [
  { ns: DAV, local: 'resourcetype', value: (e) => (e.kind === 'dir' ? [dav('collection')] : []) },
  { ns: DAV, local: 'creationdate', value: (e) => [new Date(e.createdMs).toISOString()] },
  { ns: DAV, local: 'displayname', value: (e) => [nameOf(e.path)] },
  { ns: DAV, local: 'getcontentlength', value: (e) => file(e, () => [String(e.size)]) },
  { ns: DAV, local: 'getcontenttype', value: (e) => file(e, () => [e.contentType ?? contentTypeFor(e.path, undefined) ?? DEFAULT_TYPE]) },
  { ns: DAV, local: 'getetag', value: (e) => [quoteEtag(e.etag)] },
  { ns: DAV, local: 'getlastmodified', value: (e) => [new Date(e.modifiedMs).toUTCString()] },
  { ns: DAV, local: 'supportedlock', value: () => (['exclusive', 'shared'] as const).map(lockEntry) },
  { ns: DAV, local: 'lockdiscovery', value: (e, req, view) => view.locksOn(e.path).map((l) => activeLock(req, l, view.isDir(l.root))) },
  { ns: GW, local: 'cid', value: (e) => (e.cid ? [e.cid] : undefined) },
  // What the Nextcloud desktop and mobile clients read to sync: ids that survive renames,
  // permission letters, sizes of folders too, and the checksum the client uploaded with.
  { ns: OC, local: 'id', named: true, value: (e, _req, view) => [ocId(e.fileId, view.instanceId)] },
  { ns: OC, local: 'fileid', named: true, value: (e) => [String(e.fileId)] },
  { ns: OC, local: 'permissions', named: true, value: (e) => [permissionsOf(e)] },
  { ns: OC, local: 'size', named: true, value: (e, _req, view) => [String(e.kind === 'dir' ? view.folderSize(e.path) : e.size)] },
  { ns: OC, local: 'checksums', named: true, value: (e) => file(e, () => (e.checksum ? [el(OC, 'checksum', [e.checksum])] : [])) },
]

/** Nextcloud's `oc:id`: the file id zero-padded to 8 digits, then the instance id. */
export const ocId = (fileId: number, instanceId: string) => `${String(fileId).padStart(8, '0')}${instanceId}`

/**
 * Nextcloud's permission letters for one's own files: G readable, D
 * deletable, N renameable, V movable, W writable (files), C and K can create
 * files and folders inside (folders). The root of the tree cannot be deleted,
 * renamed or moved.
 */
function permissionsOf(e: Entry): string {
  if (e.path === '/') return 'GCK'
  return e.kind === 'dir' ? 'GDNVCK' : 'GDNVW'
}

const liveByKey = new Map(LIVE.map((p) => [`${p.ns} ${p.local}`, p]))

/** Clients may not set or remove these (403, `cannot-modify-protected-property`). Our whole namespace is read-only. */
export const isProtected = (ns: string, local: string) => ns === GW || liveByKey.has(`${ns} ${local}`)

function lockEntry(scope: 'exclusive' | 'shared'): XmlElement {
  return dav('lockentry', [dav('lockscope', [dav(scope)]), dav('locktype', [dav('write')])])
}

/** The `activelock` of a lock, as in lockdiscovery and LOCK responses. */
export function activeLock(req: Request, lock: Lock, rootIsDir: boolean): XmlElement {
  const seconds = Math.max(0, Math.ceil((lock.expiresMs - Date.now()) / 1000))
  return dav('activelock', [
    dav('locktype', [dav('write')]),
    dav('lockscope', [dav(lock.scope)]),
    dav('depth', [lock.depth]),
    ...(lock.owner ? [lock.owner] : []),
    dav('timeout', [`Second-${seconds}`]),
    dav('locktoken', [dav('href', [lock.token])]),
    dav('lockroot', [dav('href', [hrefOf(req, lock.root, rootIsDir)])]),
  ])
}

export type PropRequest = { kind: 'allprop'; include: XmlElement[] } | { kind: 'propname' } | { kind: 'prop'; names: XmlElement[] }

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  424: 'Failed Dependency',
  507: 'Insufficient Storage',
}
export const statusLine = (code: number) => `HTTP/1.1 ${code} ${STATUS_TEXT[code] ?? ''}`.trimEnd()

/** One `<d:response>` with propstats grouped by status. */
export function propResponse(href: string, byStatus: Map<number, XmlElement[]>): XmlElement {
  const propstats = [...byStatus]
    .filter(([, props]) => props.length > 0)
    .map(([code, props]) => dav('propstat', [dav('prop', props), dav('status', [statusLine(code)])]))
  return dav('response', [dav('href', [href]), ...propstats])
}

const OC_SIZE = `${OC} size`
const LOCK_DISCOVERY = `${DAV} lockdiscovery`

/**
 * Reads what describing `entries` (a resource, or a folder then its
 * children) asks of the store: their dead properties in one query, the locks
 * on them in two, and folder sizes only when `oc:size` is asked for.
 */
export async function loadPropView(ctx: DavContext, entries: Entry[], what: PropRequest): Promise<PropView> {
  const asked = (key: string) =>
    what.kind === 'propname' ||
    (what.kind === 'prop' ? what.names : what.include).some((n) => `${n.ns} ${n.local}` === key) ||
    (what.kind === 'allprop' && !liveByKey.get(key)?.named)
  const top = entries[0]
  const byPath = new Map(entries.map((e) => [e.path, e]))
  const [dead, locks, sizes] = await Promise.all([
    ctx.props.listMany(entries.map((e) => e.path)),
    asked(LOCK_DISCOVERY)
      ? Promise.all([ctx.locks.covering(top.path), entries.length > 1 ? ctx.locks.below(top.path) : []]).then(([a, b]) => [...a, ...b])
      : [],
    asked(OC_SIZE)
      ? Promise.all(
          entries.filter((e) => e.kind === 'dir').map(async (e) => [e.path, await ctx.namespace.folderSize(e.path)] as const),
        ).then((l) => new Map(l))
      : new Map<string, number>(),
  ])
  return {
    instanceId: ctx.namespace.instanceId,
    dead: (path) => dead.get(path) ?? [],
    locksOn: (path) => locks.filter((l) => covers(l, path)),
    folderSize: (path) => sizes.get(path) ?? 0,
    // A lock that applies to a listed entry is rooted at it or at a folder above it.
    isDir: (path) => (byPath.get(path)?.kind ?? 'dir') === 'dir',
  }
}

/** The PROPFIND answer for one resource. */
export function describe(req: Request, view: PropView, entry: Entry, what: PropRequest): XmlElement {
  const href = hrefOf(req, entry.path, entry.kind === 'dir')
  const found: XmlElement[] = []
  const missing: XmlElement[] = []
  const dead = view.dead(entry.path)

  if (what.kind === 'propname') {
    for (const p of LIVE) if (p.value(entry, req, view) !== undefined) found.push(el(p.ns, p.local))
    for (const d of dead) found.push(el(d.ns, d.local))
  } else {
    const wanted =
      what.kind === 'prop'
        ? what.names
        : [...LIVE.filter((p) => !p.named).map((p) => el(p.ns, p.local)), ...dead.map((d) => el(d.ns, d.local)), ...what.include]
    const seen = new Set<string>()
    for (const name of wanted) {
      const key = `${name.ns} ${name.local}`
      if (seen.has(key)) continue
      seen.add(key)
      const live = liveByKey.get(key)
      const value = live ? live.value(entry, req, view) : undefined
      if (value !== undefined) {
        found.push(el(name.ns, name.local, value))
        continue
      }
      const stored = dead.find((d) => d.ns === name.ns && d.local === name.local)
      if (stored) found.push(stored)
      else if (what.kind === 'prop') missing.push(el(name.ns, name.local))
    }
  }
  return propResponse(
    href,
    new Map([
      [200, found],
      [404, missing],
    ]),
  )
}

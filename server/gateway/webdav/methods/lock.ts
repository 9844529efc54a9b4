import type { Request, Response } from 'express'
import { parentOf } from '../../namespace.ts'
import { readXml } from '../body.ts'
import type { DavContext, DavStores, MethodHandler } from '../context.ts'
import { badRequest, conflict, locked, preconditionFailed } from '../errors.ts'
import { covers, type Lock, type LockDepth, type LockScope } from '../locks.ts'
import { hrefOf, requestPath } from '../paths.ts'
import { checkConditions, guardingLocks, requireTokens } from '../preconditions.ts'
import { activeLock } from '../props.ts'
import { sendXml } from '../reply.ts'
import { DAV, dav, elements, findChild, type XmlElement } from '../xml.ts'
import { header } from '../header.ts'

export const DEFAULT_TIMEOUT_S = 3600
export const MAX_TIMEOUT_S = 7 * 24 * 3600

/**
 * LOCK (RFC 4918 §9.10): with a `lockinfo` body, a new exclusive or shared
 * write lock, depth 0 or infinity; on an unmapped URL it creates an empty
 * file first (201). Without a body, a refresh of the lock named in `If`.
 */
export const lock: MethodHandler = async (req, res, ctx) => {
  const { path, slash } = requestPath(req)
  const info = await readXml(req)
  const timeoutS = timeoutOf(req)
  if (!info) return refresh(req, res, ctx, path, timeoutS)

  const { scope, owner } = parseLockInfo(info)
  const depth = depthOf(req)
  const entry = await ctx.namespace.get(path)
  if (!entry) {
    if (slash) throw conflict('Only files can be created by LOCK')
    if ((await ctx.namespace.get(parentOf(path)))?.kind !== 'dir') throw conflict('The parent folder does not exist')
  }
  const tokens = await checkConditions(req, ctx, path)
  const guard = async (t: DavStores) => {
    const clashing = await conflicts(t, path, depth, scope)
    if (clashing.length > 0) {
      const roots = [...new Set(clashing.map((l) => l.root))]
      throw locked(
        await Promise.all(roots.map(async (root) => hrefOf(req, root, (await t.namespace.get(root))?.kind === 'dir'))),
        'no-conflicting-lock',
      )
    }
    if (!(await t.namespace.get(path))) await requireTokens(req, t, await guardingLocks(t, path, 'bind'), tokens)
  }
  await guard(ctx)

  // RFC 4918 §7.3: locking an unmapped URL creates an empty resource.
  const empty = entry ? undefined : await ctx.content.ingest((async function* () {})())
  const created = await ctx.atomically(async (t) => {
    await guard(t)
    let made = false
    if (empty && !(await t.namespace.get(path))) {
      if ((await t.namespace.get(parentOf(path)))?.kind !== 'dir') throw conflict('The parent folder does not exist')
      await t.namespace.putFile(path, { ...empty, contentType: null })
      made = true
    }
    const isDir = (await t.namespace.get(path))?.kind === 'dir'
    return { lock: await t.locks.create({ root: path, depth, scope, owner, timeoutS }), made, isDir }
  })
  sendXml(res, created.made ? 201 : 200, dav('prop', [dav('lockdiscovery', [activeLock(req, created.lock, created.isDir)])]), {
    'Lock-Token': `<${created.lock.token}>`,
  })
}

async function refresh(req: Request, res: Response, ctx: DavContext, path: string, timeoutS: number) {
  if (header(req, 'If') === undefined) throw badRequest('A LOCK refresh needs an If header with the lock token')
  const tokens = await checkConditions(req, ctx, path)
  const candidates = await Promise.all([...tokens].map((t) => ctx.locks.get(t)))
  const held = candidates.find((l): l is Lock => l !== undefined && covers(l, path))
  if (!held) throw preconditionFailed('No lock in the If header applies to this resource')
  const refreshed = await ctx.locks.refresh(held.token, timeoutS)
  const rootIsDir = (await ctx.namespace.get(refreshed.root))?.kind === 'dir'
  sendXml(res, 200, dav('prop', [dav('lockdiscovery', [activeLock(req, refreshed, rootIsDir)])]))
}

/** Locks that a new lock at `path` would clash with: any exclusive one, or any at all for an exclusive request. */
async function conflicts(t: DavStores, path: string, depth: LockDepth, scope: LockScope): Promise<Lock[]> {
  const nearby = [...(await t.locks.covering(path)), ...(depth === 'infinity' ? await t.locks.below(path) : [])]
  return nearby.filter((l) => scope === 'exclusive' || l.scope === 'exclusive')
}

function parseLockInfo(info: XmlElement): { scope: LockScope; owner?: XmlElement } {
  if (info.ns !== DAV || info.local !== 'lockinfo') throw badRequest('Expected a DAV:lockinfo body')
  const scopeEl = findChild(info, DAV, 'lockscope')
  const scope = scopeEl && elements(scopeEl).find((e) => e.ns === DAV)?.local
  if (scope !== 'exclusive' && scope !== 'shared') throw badRequest('lockscope must be exclusive or shared')
  const typeEl = findChild(info, DAV, 'locktype')
  if (!typeEl || !findChild(typeEl, DAV, 'write')) throw badRequest('Only write locks are supported')
  return { scope, owner: findChild(info, DAV, 'owner') }
}

function depthOf(req: Request): LockDepth {
  const depth = header(req, 'Depth')?.trim().toLowerCase()
  if (depth === undefined || depth === 'infinity') return 'infinity'
  if (depth === '0') return '0'
  throw badRequest('LOCK Depth must be 0 or infinity')
}

/** `Timeout: Second-3600, Infinite`: the first usable choice, capped at a week. */
function timeoutOf(req: Request): number {
  for (const choice of (header(req, 'Timeout') ?? '').split(',')) {
    const c = choice.trim().toLowerCase()
    if (c === 'infinite') return MAX_TIMEOUT_S
    const m = /^second-(\d+)$/.exec(c)
    if (m) return Math.min(Math.max(Number(m[1]), 1), MAX_TIMEOUT_S)
  }
  return DEFAULT_TIMEOUT_S
}

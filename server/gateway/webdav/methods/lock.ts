import type { Request, Response } from 'express'
import { parentOf } from '../../namespace.ts'
import { readXml } from '../body.ts'
import type { DavContext, MethodHandler } from '../context.ts'
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
  const entry = ctx.namespace.get(path)
  if (!entry) {
    if (slash) throw conflict('Only files can be created by LOCK')
    if (ctx.namespace.get(parentOf(path))?.kind !== 'dir') throw conflict('The parent folder does not exist')
  }
  const tokens = checkConditions(req, ctx, path)
  const guard = () => {
    const clashing = conflicts(ctx, path, depth, scope)
    if (clashing.length > 0) {
      throw locked([...new Set(clashing.map((l) => hrefOf(req, l.root, ctx.namespace.get(l.root)?.kind === 'dir')))], 'no-conflicting-lock')
    }
    if (!ctx.namespace.get(path)) requireTokens(req, ctx, guardingLocks(ctx, path, 'bind'), tokens)
  }
  guard()

  // RFC 4918 §7.3: locking an unmapped URL creates an empty resource.
  const empty = entry ? undefined : await ctx.content.ingest((async function* () {})())
  const created = ctx.namespace.transaction(() => {
    guard()
    let made = false
    if (empty && !ctx.namespace.get(path)) {
      if (ctx.namespace.get(parentOf(path))?.kind !== 'dir') throw conflict('The parent folder does not exist')
      ctx.namespace.putFile(path, { ...empty, contentType: null })
      made = true
    }
    return { lock: ctx.locks.create({ root: path, depth, scope, owner, timeoutS }), made }
  })
  sendXml(res, created.made ? 201 : 200, dav('prop', [dav('lockdiscovery', [activeLock(req, ctx, created.lock)])]), {
    'Lock-Token': `<${created.lock.token}>`,
  })
}

async function refresh(req: Request, res: Response, ctx: DavContext, path: string, timeoutS: number) {
  if (header(req, 'If') === undefined) throw badRequest('A LOCK refresh needs an If header with the lock token')
  const tokens = checkConditions(req, ctx, path)
  const held = [...tokens].map((t) => ctx.locks.get(t)).find((l): l is Lock => l !== undefined && covers(l, path))
  if (!held) throw preconditionFailed('No lock in the If header applies to this resource')
  const refreshed = ctx.locks.refresh(held.token, timeoutS)
  sendXml(res, 200, dav('prop', [dav('lockdiscovery', [activeLock(req, ctx, refreshed)])]))
}

/** Locks that a new lock at `path` would clash with: any exclusive one, or any at all for an exclusive request. */
function conflicts(ctx: DavContext, path: string, depth: LockDepth, scope: LockScope): Lock[] {
  const nearby = [...ctx.locks.covering(path), ...(depth === 'infinity' ? ctx.locks.below(path) : [])]
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

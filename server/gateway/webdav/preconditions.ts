import type { Request } from 'express'
import { parentOf } from '../namespace.ts'
import type { DavStores } from './context.ts'
import { DavError, locked, preconditionFailed } from './errors.ts'
import { listHolds, parseIf, submittedTokens, type ResourceState } from './if-header.ts'
import type { Lock } from './locks.ts'
import { headerPath, hrefOf } from './paths.ts'
import { header } from './header.ts'

export const quoteEtag = (etag: string) => `"${etag}"`

async function stateOf(ctx: Pick<DavStores, 'namespace' | 'locks'>, path: string | undefined): Promise<ResourceState> {
  if (path === undefined) return { lockTokens: new Set() }
  const [entry, locks] = await Promise.all([ctx.namespace.get(path), ctx.locks.covering(path)])
  return {
    etag: entry && quoteEtag(entry.etag),
    lockTokens: new Set(locks.map((l) => l.token)),
  }
}

/**
 * Evaluates `If`, `If-Match` and `If-None-Match` for a request on `path`
 * (412 when they fail) and returns the lock tokens the client submitted.
 */
export async function checkConditions(req: Request, ctx: Pick<DavStores, 'namespace' | 'locks'>, path: string): Promise<Set<string>> {
  const entry = await ctx.namespace.get(path)
  const etag = entry && quoteEtag(entry.etag)

  const ifMatch = req.headers['if-match']
  if (ifMatch !== undefined && !etagListMatches(ifMatch, etag)) throw preconditionFailed('If-Match does not match')
  const ifNoneMatch = req.headers['if-none-match']
  if (ifNoneMatch !== undefined && etagListMatches(ifNoneMatch, etag)) {
    if (req.method === 'GET' || req.method === 'HEAD')
      throw new DavError(304, 'NOT_MODIFIED', 'Not modified', undefined, etag ? { ETag: etag } : {})
    throw preconditionFailed('If-None-Match matches')
  }

  const ifHeader = header(req, 'If')
  if (ifHeader === undefined) return new Set()
  const lists = parseIf(ifHeader)
  let holds = false
  for (const list of lists) {
    let target: string | undefined = path
    if (list.tag !== undefined) {
      try {
        target = headerPath(req, list.tag).path
      } catch {
        target = undefined // a tag we cannot resolve names no resource of ours
      }
    }
    if (listHolds(list, await stateOf(ctx, target))) {
      holds = true
      break
    }
  }
  if (!holds) throw preconditionFailed('If header conditions do not hold')
  return submittedTokens(lists)
}

/** `*` matches any existing resource; otherwise any listed (weakly compared) entity tag. */
function etagListMatches(header: string, etag: string | undefined): boolean {
  if (etag === undefined) return false
  if (header.trim() === '*') return true
  const strip = (t: string) => t.trim().replace(/^W\//, '')
  return header.split(',').some((t) => strip(t) === etag)
}

/**
 * The locks that guard a change to `path`:
 * - `write`: its content or properties (locks covering it);
 * - `bind`: creating or removing it (also the parent's locks, which protect membership);
 * - `tree`: removing it with everything below (also locks rooted below).
 */
export async function guardingLocks(ctx: Pick<DavStores, 'locks'>, path: string, change: 'write' | 'bind' | 'tree'): Promise<Lock[]> {
  const found = new Map<string, Lock>()
  const add = (locks: Lock[]) => locks.forEach((l) => found.set(l.token, l))
  add(await ctx.locks.covering(path))
  if (change !== 'write' && path !== '/') add(await ctx.locks.covering(parentOf(path)))
  if (change === 'tree') add(await ctx.locks.below(path))
  return [...found.values()]
}

/**
 * 423 unless, for every locked resource among `locks`, the client submitted
 * the token of one of the locks rooted there (any one of several shared locks will do).
 */
export async function requireTokens(req: Request, ctx: Pick<DavStores, 'namespace'>, locks: Lock[], tokens: Set<string>): Promise<void> {
  const byRoot = new Map<string, Lock[]>()
  for (const l of locks) byRoot.set(l.root, [...(byRoot.get(l.root) ?? []), l])
  const unmet = [...byRoot].filter(([, ls]) => !ls.some((l) => tokens.has(l.token))).map(([root]) => root)
  if (unmet.length > 0) {
    const hrefs = await Promise.all(unmet.map(async (root) => hrefOf(req, root, (await ctx.namespace.get(root))?.kind === 'dir')))
    throw locked(hrefs)
  }
}

/** Shorthand: the conditions hold and the client holds the locks guarding `change` of `path`. */
export async function checkWrite(
  req: Request,
  ctx: Pick<DavStores, 'namespace' | 'locks'>,
  path: string,
  change: 'write' | 'bind' | 'tree',
): Promise<Set<string>> {
  const tokens = await checkConditions(req, ctx, path)
  await requireTokens(req, ctx, await guardingLocks(ctx, path, change), tokens)
  return tokens
}

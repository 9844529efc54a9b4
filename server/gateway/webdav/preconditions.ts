import type { Request } from 'express'
import { parentOf } from '../namespace.ts'
import type { DavContext } from './context.ts'
import { DavError, locked, preconditionFailed } from './errors.ts'
import { listHolds, parseIf, submittedTokens, type ResourceState } from './if-header.ts'
import type { Lock } from './locks.ts'
import { headerPath, hrefOf } from './paths.ts'
import { header } from './header.ts'

export const quoteEtag = (etag: string) => `"${etag}"`

function stateOf(ctx: DavContext, path: string | undefined): ResourceState {
  if (path === undefined) return { lockTokens: new Set() }
  const entry = ctx.namespace.get(path)
  return {
    etag: entry && quoteEtag(entry.etag),
    lockTokens: new Set(ctx.locks.covering(path).map((l) => l.token)),
  }
}

/**
 * Evaluates `If`, `If-Match` and `If-None-Match` for a request on `path`
 * (412 when they fail) and returns the lock tokens the client submitted.
 */
export function checkConditions(req: Request, ctx: DavContext, path: string): Set<string> {
  const entry = ctx.namespace.get(path)
  const etag = entry && quoteEtag(entry.etag)

  const ifMatch = req.headers['if-match']
  if (ifMatch !== undefined && !etagListMatches(ifMatch, etag)) throw preconditionFailed('If-Match does not match')
  const ifNoneMatch = req.headers['if-none-match']
  if (ifNoneMatch !== undefined && etagListMatches(ifNoneMatch, etag)) {
    if (req.method === 'GET' || req.method === 'HEAD') throw new DavError(304, 'NOT_MODIFIED', 'Not modified', undefined, etag ? { ETag: etag } : {})
    throw preconditionFailed('If-None-Match matches')
  }

  const ifHeader = header(req, 'If')
  if (ifHeader === undefined) return new Set()
  const lists = parseIf(ifHeader)
  const holds = lists.some((list) => {
    let target: string | undefined = path
    if (list.tag !== undefined) {
      try {
        target = headerPath(req, list.tag).path
      } catch {
        target = undefined // a tag we cannot resolve names no resource of ours
      }
    }
    return listHolds(list, stateOf(ctx, target))
  })
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
export function guardingLocks(ctx: DavContext, path: string, change: 'write' | 'bind' | 'tree'): Lock[] {
  const found = new Map<string, Lock>()
  const add = (locks: Lock[]) => locks.forEach((l) => found.set(l.token, l))
  add(ctx.locks.covering(path))
  if (change !== 'write' && path !== '/') add(ctx.locks.covering(parentOf(path)))
  if (change === 'tree') add(ctx.locks.below(path))
  return [...found.values()]
}

/**
 * 423 unless, for every locked resource among `locks`, the client submitted
 * the token of one of the locks rooted there (any one of several shared locks will do).
 */
export function requireTokens(req: Request, ctx: DavContext, locks: Lock[], tokens: Set<string>): void {
  const byRoot = new Map<string, Lock[]>()
  for (const l of locks) byRoot.set(l.root, [...(byRoot.get(l.root) ?? []), l])
  const unmet = [...byRoot].filter(([, ls]) => !ls.some((l) => tokens.has(l.token))).map(([root]) => root)
  if (unmet.length > 0) {
    throw locked(unmet.map((root) => hrefOf(req, root, ctx.namespace.get(root)?.kind === 'dir')))
  }
}

/** Shorthand: the conditions hold and the client holds the locks guarding `change` of `path`. */
export function checkWrite(req: Request, ctx: DavContext, path: string, change: 'write' | 'bind' | 'tree'): Set<string> {
  const tokens = checkConditions(req, ctx, path)
  requireTokens(req, ctx, guardingLocks(ctx, path, change), tokens)
  return tokens
}

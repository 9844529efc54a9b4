import type { FolderEntry } from '../shared/contracts/folder-states.ts'
import { toFolderEntry } from './convert.ts'
import { BridgeError } from './errors.ts'
import type { GatewayClient } from './gateway-client.ts'

/** One gateway folder's last answer, converted once, with what was written from it. */
export interface KeptFolder {
  /** The gateway's ETag of it; absent from a gateway that gives none (then nothing is kept). */
  etag?: string
  entries: FolderEntry[]
  byName: Map<string, FolderEntry>
  /** The last whole answer written from it, for the same user path and IPFS gateway. */
  whole?: WholeAnswer
}

/** A whole folder's answer, encoded once per change: as UTF-8 bytes, and gzipped when a client first takes gzip. */
export interface WholeAnswer {
  key: string
  json: Buffer
  gzipped?: Promise<Buffer>
}

/**
 * The bridge's copy of each polled folder's states: the gateway is asked with
 * the ETag of the copy (`If-None-Match`), so an unchanged folder costs a 304
 * and no parsing; requests for one folder at the same time share one ask.
 * The gateway drops its own answer on any write, so a copy is never staler
 * than the gateway's (a few seconds at most).
 */
export function createFolderStatesCache(o: { gateway: GatewayClient; maxEntries?: number }) {
  const maxEntries = o.maxEntries ?? 200_000
  const kept = new Map<string, KeptFolder>()
  const asking = new Map<string, Promise<KeptFolder | undefined>>()
  let held = 0

  const keep = (key: string, folder: KeptFolder) => {
    const old = kept.get(key)
    if (old) held -= old.entries.length
    kept.delete(key)
    if (!folder.etag) return
    kept.set(key, folder)
    held += folder.entries.length
    // Oldest first out; a Map keeps insertion order. The newest stays, however large.
    for (const [k, f] of kept) {
      if (held <= maxEntries || k === key) break
      kept.delete(k)
      held -= f.entries.length
    }
  }

  async function ask(key: string, gatewayPath: string): Promise<KeptFolder | undefined> {
    const before = kept.get(key)
    const answer = await o.gateway.folderStates(gatewayPath, before?.etag)
    if (answer === 'unchanged' && before) return before
    if (answer === 'unchanged' || answer === undefined) {
      kept.delete(key)
      return undefined
    }
    const entries = answer.entries.map(toFolderEntry)
    const folder: KeptFolder = { ...(answer.etag ? { etag: answer.etag } : {}), entries, byName: new Map(entries.map((e) => [e.name, e])) }
    keep(key, folder)
    return folder
  }

  return {
    /** The folder's states as the gateway has them now; undefined where the gateway has no folder states. */
    get(gatewayPath: string): Promise<KeptFolder | undefined> {
      const key = `${o.gateway.url.href}\0${gatewayPath}`
      let running = asking.get(key)
      if (!running) {
        running = ask(key, gatewayPath).finally(() => asking.delete(key))
        asking.set(key, running)
      }
      return running
    },
  }
}

export type FolderStatesCache = ReturnType<typeof createFolderStatesCache>

/**
 * At most `running` of one user's requests worked on at a time; up to
 * `waiting` more wait their turn in order, and past that a 429 with
 * Retry-After: one user's many lists cannot take every user's share.
 */
export function createPerUserLimit(o: { running: number; waiting: number }) {
  const users = new Map<string, { running: number; queue: (() => void)[] }>()
  return async function limited<T>(userId: string, work: () => Promise<T>): Promise<T> {
    let user = users.get(userId)
    if (!user) users.set(userId, (user = { running: 0, queue: [] }))
    if (user.running >= o.running) {
      if (user.queue.length >= o.waiting) {
        throw new BridgeError(429, 'TOO_MANY_REQUESTS', 'Too many folder-states requests of this user at once; try again shortly', {
          'Retry-After': '1',
        })
      }
      await new Promise<void>((resolve) => user.queue.push(resolve))
    } else user.running++
    try {
      return await work()
    } finally {
      // The slot goes to the next in line as it is, else it is given back.
      const next = user.queue.shift()
      if (next) next()
      else if (--user.running === 0) users.delete(userId)
    }
  }
}

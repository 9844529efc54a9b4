import { watchWrites, type Sql } from '../shared/sql/index.ts'

/**
 * The gateway's records over `sql`, counting what is written: every record
 * (files, folders, groups, deals) is read from this one handle, and this
 * process alone writes it (one gateway per database), so an unchanged count
 * means nothing a record is made of has changed. A transaction counts once
 * it is over: a record made meanwhile carries the count from before, so it
 * is not kept.
 */
export function countingWrites(sql: Sql): { sql: Sql; writes: () => number } {
  let writes = 0
  return { sql: watchWrites(sql, { after: () => writes++ }), writes: () => writes }
}

export interface RecordCache {
  /**
   * The record kept for `key`, if nothing was written since it was made and
   * it is younger than the freshness limit; else `make` runs (once, however
   * many ask at the same time) and its answer is kept.
   */
  get(key: string, make: () => Promise<string>): Promise<string>
}

export interface RecordCacheOptions {
  writes: () => number
  /** What a record says beyond the database (a deal's progress, free disk, the time) is at most this old. */
  freshMs: number
  maxEntries: number
  now?: () => number
}

/**
 * Finished `/file-info` answers, so that many clients polling the same
 * record cost one computation per change (or per `freshMs`), not one per
 * request: 50 tabs polling a folder must not slow everyone else down.
 */
export function createRecordCache(o: RecordCacheOptions): RecordCache {
  const now = o.now ?? Date.now
  const kept = new Map<string, { text: string; writes: number; at: number }>()
  const making = new Map<string, { writes: number; answer: Promise<string> }>()
  return {
    get(key, make) {
      const writes = o.writes()
      const hit = kept.get(key)
      if (hit && hit.writes === writes && now() - hit.at < o.freshMs) return Promise.resolve(hit.text)
      const running = making.get(key)
      if (running && running.writes === writes) return running.answer
      const at = now()
      const answer = make().then((text) => {
        // Oldest first out; a Map keeps insertion order.
        kept.delete(key)
        kept.set(key, { text, writes, at })
        if (kept.size > o.maxEntries) kept.delete(kept.keys().next().value!)
        return text
      })
      const entry = { writes, answer }
      making.set(key, entry)
      void answer
        .finally(() => {
          if (making.get(key) === entry) making.delete(key)
        })
        .catch(() => undefined)
      return answer
    },
  }
}

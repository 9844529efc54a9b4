import { join } from 'node:path'
import type { Db } from '../../shared/db.ts'
import type { Logger } from '../../shared/logger.ts'
import { createBlockFiles } from './block-files.ts'
import { createGroupLifecycle } from './group-lifecycle.ts'
import { ingestFile } from './ingest.ts'
import { readContent } from './read-content.ts'
import { createRepository } from './repository.ts'
import { migrateContent } from './schema.ts'
import type { ContentStore } from './types.ts'

export type { ContentStore, GroupRecord, IngestResult, IngestOptions, Deal } from './types.ts'
export type { GroupState } from './group-state.ts'
export { canHaveDeals, GROUP_STATES } from './group-state.ts'

export interface ContentStoreOptions {
  db: Db
  /** The gateway's data dir; blocks and CARs go to `<dir>/groups/`. */
  dir: string
  /** A group closes once it holds this many bytes. */
  groupSize: number
  /** A group with data closes after this long without new blocks. */
  groupIdleMs: number
  logger: Logger
}

/**
 * The gateway's content: UnixFS DAGs computed while files stream in, their
 * blocks packed into groups (append-only block files indexed in SQLite), each
 * group sealed into a CAR with its piece CID. Resumes unfinished work of a
 * previous process on the same dir and database.
 */
export function createContentStore(options: ContentStoreOptions): ContentStore {
  const logger = options.logger.child({ module: 'content' })
  migrateContent(options.db)
  const repo = createRepository(options.db)
  const files = createBlockFiles(join(options.dir, 'groups'))
  const lifecycle = createGroupLifecycle({ repo, files, groupSize: options.groupSize, groupIdleMs: options.groupIdleMs, logger })
  const pending = new Map()
  const inFlight = new Set<Promise<unknown>>()
  let closed = false
  lifecycle.resume()

  return {
    async ingest(source, ingestOptions) {
      if (closed) throw new Error('Content store is closed')
      const run = ingestFile({ repo, files, lifecycle, pending }, source, ingestOptions)
      inFlight.add(run)
      try {
        return await run
      } finally {
        inFlight.delete(run)
      }
    },
    has: (cid) => repo.content(cid) !== undefined,
    stat: (cid) => {
      const c = repo.content(cid)
      return c && { size: c.size, dagSize: c.dagSize }
    },
    read: (cid, range) => readContent(repo, files, cid, range),
    groupsOf: (cid) => repo.groupsOf(cid),
    groups: () => repo.allGroups(),
    sealWritable: () => lifecycle.sealWritable(),
    settled: () => lifecycle.settled(),
    async close() {
      if (closed) return
      closed = true
      // Let running ingests finish (or fail) so nothing writes after we close the files.
      await Promise.allSettled([...inFlight])
      await lifecycle.close()
      await files.close()
    },
  }
}

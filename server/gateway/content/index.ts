import { join } from 'node:path'
import { createSealPool } from './seal-pool.ts'
import type { Sql } from '../../shared/sql/index.ts'
import type { Faults } from '../../shared/faults.ts'
import type { Logger } from '../../shared/logger.ts'
import { createBlockFiles } from './block-files.ts'
import { createGroupLifecycle } from './group-lifecycle.ts'
import { createGroupUse } from './group-use.ts'
import { ingestFile, storeDirectory } from './ingest.ts'
import { createLocalBytes } from './local-bytes.ts'
import { readContent } from './read-content.ts'
import { createRepository } from './repository.ts'
import { migrateContent } from './schema.ts'
import type { ContentStore, GroupDealView, GroupRecord } from './types.ts'
import type { CidProfile } from '../../shared/cid-profile.ts'

export type { ContentStore, GroupRecord, IngestResult, IngestOptions, Deal, FailedDeal, GroupDealView } from './types.ts'
export type { GroupState } from './group-state.ts'
export type { RemoteCopy, RemoteSource } from './types.ts'
export { canHaveDeals, GROUP_STATES } from './group-state.ts'

export interface ContentStoreOptions {
  /** The gateway's store (SQLite file or PostgreSQL schema). */
  sql: Sql
  /** The gateway's data dir; blocks and CARs go to `<dir>/groups/`. */
  dir: string
  /** A group closes once it holds this many bytes. */
  groupSize: number
  /** The largest CAR every storage route in use takes (a PDP copy is one upload of it); a group closes before passing it. */
  maxCarBytes?: number
  /** A group with data closes after this long without new blocks. */
  groupIdleMs: number
  /** A group holding only folders' directory nodes (listings) is left open by the idle timer: it closes this long after it opened (group-closing.ts). */
  listingWaitMs: number
  logger: Logger
  /** Groups' shown deals, failed deals and retrievable copies (the deal engine's view), by group id, in one query; none without it. */
  dealViews?: (groupIds?: number[]) => Promise<Map<number, GroupDealView>>
  /** Where a test steps in (shared/faults.ts); nothing happens without it. */
  faults?: Faults
  /** Worker threads that seal groups, that many at once; 0 or absent: on this thread, one at a time. */
  sealThreads?: number
  /** How new files are imported (CID_PROFILE; DEFAULT_CID_PROFILE without it). */
  cidProfile?: CidProfile
  /** The gateway's clock (Date.now without it): how long a group an upload used stays in use after it. */
  now?: () => number
}

/**
 * The gateway's content: UnixFS DAGs computed while files stream in, their
 * blocks packed into groups (append-only block files indexed in the store), each
 * group sealed into a CAR with its piece CID. Resumes unfinished work of a
 * previous process on the same dir and database.
 */
export async function createContentStore(options: ContentStoreOptions): Promise<ContentStore> {
  const logger = options.logger.child({ module: 'content' })
  await migrateContent(options.sql)
  const repo = createRepository(options.sql)
  const files = createBlockFiles(join(options.dir, 'groups'))
  const sealer = options.sealThreads ? createSealPool({ size: options.sealThreads, logger }) : undefined
  const lifecycle = createGroupLifecycle({
    repo,
    files,
    groupSize: options.groupSize,
    maxCarBytes: options.maxCarBytes,
    groupIdleMs: options.groupIdleMs,
    listingWaitMs: options.listingWaitMs,
    logger,
    faults: options.faults,
    sealer,
    sealConcurrency: sealer?.size,
  })
  const pending = new Map()
  // A minute covers the step from an upload's end to its file in the tree.
  const use = createGroupUse({ lingerMs: 60_000, now: options.now })
  const inFlight = new Set<Promise<unknown>>()
  let closed = false
  const local = createLocalBytes({ repo, files, logger, faults: options.faults })
  try {
    await lifecycle.resume()
  } catch (err) {
    await sealer?.close()
    await files.close()
    throw err
  }
  const recovered = local.recover()
  recovered.catch((err) => logger.error({ err }, 'sweeping offloaded groups failed'))
  /** Groups with their deals, read in one query whatever their number. */
  const withDeals = async (groups: GroupRecord[], all = false): Promise<GroupRecord[]> => {
    if (!options.dealViews || groups.length === 0) return groups
    const views = await options.dealViews(all ? undefined : [...new Set(groups.map((g) => g.id))])
    const none = { deals: [], retrievableCopies: 0 }
    return groups.map((g) => ({ ...g, ...(views.get(g.id) ?? none) }))
  }

  return {
    async ingest(source, ingestOptions) {
      if (closed) throw new Error('Content store is closed')
      const cidProfile = ingestOptions?.cidProfile ?? options.cidProfile
      const run = ingestFile({ repo, files, lifecycle, pending, use, cidProfile }, source, ingestOptions)
      inFlight.add(run)
      try {
        return await run
      } finally {
        inFlight.delete(run)
      }
    },
    async storeDirectory(root) {
      if (closed) throw new Error('Content store is closed')
      const run = storeDirectory({ repo, files, lifecycle, pending, use }, root, root.nodes)
      inFlight.add(run)
      try {
        await run
      } finally {
        inFlight.delete(run)
      }
    },
    inUse: (groupId) => use.inUse(groupId),
    has: async (cid) => (await repo.content(cid)) !== undefined,
    stat: async (cid) => {
      const c = await repo.content(cid)
      return c && { size: c.size, dagSize: c.dagSize }
    },
    read: (cid, range) => readContent(repo, files, cid, range, local),
    groupsOf: async (cid) => withDeals(await repo.groupsOf(cid)),
    groupIdsOfMany: (cids) => repo.groupIdsOfMany(cids),
    unsealedBytes: () => repo.unsealedBytes(),
    groupsWithIds: async (ids) => withDeals(await repo.groupsWithIds(ids)),
    async groupsOfMany(cids) {
      const byContent = await repo.groupsOfMany(cids)
      const withViews = new Map((await withDeals([...byContent.values()].flat())).map((g) => [g.id, g]))
      return new Map([...byContent].map(([cid, groups]) => [cid, groups.map((g) => withViews.get(g.id)!)]))
    },
    groups: async () => withDeals(await repo.allGroups(), true),
    group: async (id) => {
      const g = await repo.group(id)
      return g && (await withDeals([g]))[0]
    },
    // A group held for repair is in `reload` with its CAR rebuilt on disk.
    carFile: async (id) => (['ready_for_deals', 'reload'].includes((await repo.group(id))?.state ?? '') ? files.carPath(id) : undefined),
    sampleBlock: (id) => repo.sampleBlock(id),
    async carRoot(id) {
      // As the CAR's header has it (group-car.ts): the files rooted here, else the first block.
      return (await repo.groupRoots(id))[0] ?? (await repo.firstBlock(id))
    },
    async offload(id) {
      await recovered
      return local.offload(id)
    },
    async holdForDeals(id) {
      await recovered
      return local.holdForDeals(id)
    },
    setRemoteSource: (source) => local.setRemote(source),
    sealWritable: () => lifecycle.sealWritable(),
    groupSize: () => lifecycle.groupSize(),
    limitGroupSize: (pieceSize) => lifecycle.limitGroupSize(pieceSize),
    settled: () => lifecycle.settled(),
    async close() {
      if (closed) return
      closed = true
      // Let running ingests finish (or fail) so nothing writes after we close the files.
      await Promise.allSettled([...inFlight])
      await lifecycle.close()
      await sealer?.close()
      await recovered.catch(() => {})
      await files.close()
    },
  }
}

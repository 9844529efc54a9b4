import { jsonList, type Sql } from '../../shared/sql/index.ts'
import type { FolderIndex } from '../folder-index.ts'

/**
 * Whether each group still holds something live: a file of the tree whose
 * content has blocks in it (`content_group_links`), or a folder's current
 * listing (its directory node). A group with neither is dead: what was
 * deleted or replaced, and listings of folders as they were before a change.
 */
export interface Liveness {
  /**
   * One look at every group that has copies or may get them (ready for deals, offloaded, reload): one with
   * nothing live left is marked dead from `nowMs` (a mark already there is kept, so the grace period counts
   * from the first time it was seen dead, across restarts); one live again loses its mark (a restore from the
   * trash is the same bytes PUT again: the same CID). A group being compacted is never marked: it keeps its
   * copies, repaired if need be, until its files have theirs elsewhere (deals/compact.ts retires it). Returns the
   * groups whose mark changed.
   */
  mark(nowMs: number): Promise<{ died: number[]; revived: number[] }>
  /** Marks the dead group retired at `nowMs`, unless something in it lives again (checked in the same statement): false then. */
  retire(groupId: number, nowMs: number): Promise<boolean>
}

/** States in which a group has copies or may get them: the only ones liveness is asked of. */
export const WITH_COPIES = "state IN ('ready_for_deals', 'offloaded', 'reload')"

/**
 * The group `g` holds something live. EXISTS stops at its first live link, so a live group costs an index
 * probe or two (links by group, entries by cid) and a pass costs about one per group, not one per file; the
 * listed groups come in as one JSON parameter.
 */
export const live = (dialect: Sql['dialect']) =>
  `(EXISTS (SELECT 1 FROM content_group_links l JOIN entries e ON e.cid = l.content_cid WHERE l.group_id = g.id)
    OR g.id IN (SELECT l.group_id FROM content_group_links l WHERE l.content_cid IN (${jsonList(dialect)})))`

/**
 * Liveness over the gateway's store, where the tree (`entries`) and the content store's tables live side by
 * side; `listings` gives every folder's current listing CID.
 */
export function createLiveness(o: { sql: Sql; listings: () => Promise<string[]> }): Liveness {
  const { sql } = o
  const isLive = live(sql.dialect)
  const ids = (rows: { id: number }[]) => rows.map((r) => Number(r.id))

  return {
    async mark(nowMs) {
      const listed = JSON.stringify(await o.listings())
      const died = await sql.all<{ id: number }>(
        `UPDATE content_groups AS g SET dead_since_ms = ?
         WHERE dead_since_ms IS NULL AND retired_ms IS NULL AND compacting_ms IS NULL AND ${WITH_COPIES} AND NOT ${isLive} RETURNING id`,
        [nowMs, listed],
      )
      const revived = await sql.all<{ id: number }>(
        `UPDATE content_groups AS g SET dead_since_ms = NULL
         WHERE dead_since_ms IS NOT NULL AND retired_ms IS NULL AND ${isLive} RETURNING id`,
        [listed],
      )
      return { died: ids(died), revived: ids(revived) }
    },
    async retire(groupId, nowMs) {
      const listed = JSON.stringify(await o.listings())
      const { changes } = await sql.run(
        `UPDATE content_groups AS g SET retired_ms = ?
         WHERE id = ? AND retired_ms IS NULL AND dead_since_ms IS NOT NULL AND NOT ${isLive}`,
        [nowMs, groupId, listed],
      )
      return changes === 1
    },
  }
}

/** Every folder's current listing CID (its summary's), made where not kept: older listings are not among them. */
export async function currentListings(folders: Pick<FolderIndex, 'summary'>): Promise<string[]> {
  return [...(await listingsByPath(folders)).values()]
}

/** Every folder's path and current listing CID. */
async function listingsByPath(folders: Pick<FolderIndex, 'summary'>): Promise<Map<string, string>> {
  const cids = new Map<string, string>()
  const walk = async (path: string): Promise<void> => {
    const s = await folders.summary(path)
    cids.set(path, s.cid)
    for (const sub of s.subfolders) await walk(sub)
  }
  await walk('/')
  return cids
}

/**
 * Has the folders whose current listing is one of `cids` store their directory nodes again (their background
 * run does it, as after a change): a listing in a group being compacted is then written into a new group.
 */
export async function storeListingsAgain(folders: Pick<FolderIndex, 'summary' | 'changed'>, cids: string[]): Promise<void> {
  const wanted = new Set(cids)
  const paths = [...(await listingsByPath(folders))].filter(([, cid]) => wanted.has(cid)).map(([path]) => path)
  if (paths.length > 0) folders.changed(paths)
}

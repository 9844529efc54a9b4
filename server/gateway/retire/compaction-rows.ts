import { LEGACY_CID_PROFILE, type CidProfile } from '../../shared/cid-profile.ts'
import { jsonList, type Sql } from '../../shared/sql/index.ts'
import { live, WITH_COPIES } from './liveness.ts'

/** A group's bytes, and how many of them are leaves no file of the tree has. */
export interface GroupDeadBytes {
  groupId: number
  bytes: number
  deadBytes: number
}

/**
 * The store's side of compaction (deals/compact.ts), each step one statement or
 * one transaction, so that a stop anywhere resumes where it was: a live group
 * mostly dead is marked (`sparse_since_ms`); once so for the undo window, its
 * compaction starts (`compacting_ms`: uploads no longer deduplicate against
 * it); its live files, written again, leave it one by one (each an upload's
 * one transaction); once the groups they went to have their copies, it is
 * retired, and the files' links to it give way to their new ones.
 */
export interface CompactionRows {
  /**
   * Each live group with copies not being compacted: marked sparse from `nowMs` (a mark there is kept) when more
   * than `fraction` of its bytes are dead, its mark cleared when no longer (a file restored). The marked groups' bytes.
   */
  mark(nowMs: number, fraction: number): Promise<GroupDeadBytes[]>
  /** Groups marked sparse at `sinceMs` or before, not being compacted yet. */
  due(sinceMs: number): Promise<number[]>
  /** Starts compacting a group still marked sparse and live; false when it no longer is. */
  start(groupId: number, nowMs: number): Promise<boolean>
  /** Groups being compacted, not retired yet. */
  compacting(): Promise<number[]>
  /** The files of the tree whose content still has its root or a leaf in the group: to write again, with their profile. */
  toRewrite(groupId: number): Promise<{ cid: string; cidProfile: CidProfile }[]>
  /** Current folder listings (`listed`) whose root node is still in the group: to store again. */
  listingsIn(groupId: number, listed: string[]): Promise<string[]>
  /** The groups now holding blocks written again out of the group, but dead or retired ones (nothing needs their copies). */
  targets(groupId: number): Promise<number[]>
  /**
   * In one transaction: the links to the group of contents no longer in it go, links hidden behind it show, and
   * it is retired, unless a live file or a current listing (`listed`) still has its data there (false then).
   */
  finish(groupId: number, nowMs: number, listed: string[]): Promise<boolean>
}

/** The content `content` (an SQL expression) has its root block or a leaf in the group given as the next parameter. */
const inGroup = (content: string) =>
  `EXISTS (SELECT 1 FROM content_blocks b WHERE b.group_id = ?
     AND (b.cid = ${content} OR b.cid IN (SELECT block_cid FROM content_leaves WHERE content_cid = ${content})))`

export function createCompactionRows(sql: Sql): CompactionRows {
  const integers = jsonList(sql.dialect, 'integer')
  const texts = jsonList(sql.dialect)
  const isLive = live(sql.dialect)
  const candidate = `${WITH_COPIES} AND dead_since_ms IS NULL AND retired_ms IS NULL AND compacting_ms IS NULL`

  return {
    async mark(nowMs, fraction) {
      // Dead bytes: leaves no file of the tree has (one index probe per leaf by block), of candidate groups only.
      const rows = await sql.all<{ id: number; size: number; dead: number | null }>(
        `SELECT g.id, g.size, d.dead FROM content_groups g LEFT JOIN (
           SELECT b.group_id, SUM(b.length) AS dead FROM content_blocks b
           WHERE b.group_id IN (SELECT id FROM content_groups WHERE ${candidate})
             AND EXISTS (SELECT 1 FROM content_leaves l WHERE l.block_cid = b.cid)
             AND NOT EXISTS (SELECT 1 FROM content_leaves l JOIN entries e ON e.cid = l.content_cid WHERE l.block_cid = b.cid)
           GROUP BY b.group_id
         ) d ON d.group_id = g.id
         WHERE ${candidate}`,
      )
      const all = rows.map((r) => ({ groupId: Number(r.id), bytes: Number(r.size), deadBytes: Number(r.dead ?? 0) }))
      const sparse = all.filter((g) => g.bytes > 0 && g.deadBytes / g.bytes > fraction)
      const ids = (list: GroupDeadBytes[]) => JSON.stringify(list.map((g) => g.groupId))
      await sql.run(`UPDATE content_groups SET sparse_since_ms = ? WHERE sparse_since_ms IS NULL AND id IN (${integers})`, [
        nowMs,
        ids(sparse),
      ])
      await sql.run(`UPDATE content_groups SET sparse_since_ms = NULL WHERE ${candidate} AND id NOT IN (${integers})`, [ids(sparse)])
      return sparse
    },
    async due(sinceMs) {
      const rows = await sql.all<{ id: number }>(`SELECT id FROM content_groups WHERE ${candidate} AND sparse_since_ms <= ? ORDER BY id`, [
        sinceMs,
      ])
      return rows.map((r) => Number(r.id))
    },
    async start(groupId, nowMs) {
      const { changes } = await sql.run(
        `UPDATE content_groups SET compacting_ms = ? WHERE id = ? AND ${candidate} AND sparse_since_ms IS NOT NULL`,
        [nowMs, groupId],
      )
      return changes === 1
    },
    async compacting() {
      const rows = await sql.all<{ id: number }>(
        'SELECT id FROM content_groups WHERE compacting_ms IS NOT NULL AND retired_ms IS NULL ORDER BY id',
      )
      return rows.map((r) => Number(r.id))
    },
    async toRewrite(groupId) {
      const rows = await sql.all<{ cid: string; cid_profile: CidProfile | null }>(
        `SELECT DISTINCT e.cid, e.cid_profile FROM content_group_links l JOIN entries e ON e.cid = l.content_cid
         WHERE l.group_id = ? AND e.kind = 'file' AND ${inGroup('e.cid')} ORDER BY e.cid`,
        [groupId, groupId],
      )
      return rows.map((r) => ({ cid: r.cid, cidProfile: r.cid_profile ?? LEGACY_CID_PROFILE }))
    },
    async listingsIn(groupId, listed) {
      const rows = await sql.all<{ cid: string }>(`SELECT b.cid FROM content_blocks b WHERE b.group_id = ? AND b.cid IN (${texts})`, [
        groupId,
        JSON.stringify(listed),
      ])
      return rows.map((r) => r.cid)
    },
    async targets(groupId) {
      const rows = await sql.all<{ id: number }>(
        `SELECT DISTINCT g.id FROM content_blocks_moved m JOIN content_blocks b ON b.cid = m.cid JOIN content_groups g ON g.id = b.group_id
         WHERE m.group_id = ? AND g.id <> ? AND g.dead_since_ms IS NULL AND g.retired_ms IS NULL ORDER BY g.id`,
        [groupId, groupId],
      )
      return rows.map((r) => Number(r.id))
    },
    finish(groupId, nowMs, listed) {
      return sql
        .transaction(async (tx) => {
          await tx.run(
            `DELETE FROM content_group_links WHERE group_id = ? AND behind_group_id IS NULL AND NOT ${inGroup('content_group_links.content_cid')}`,
            [groupId, groupId],
          )
          await tx.run('UPDATE content_group_links SET behind_group_id = NULL WHERE behind_group_id = ?', [groupId])
          const { changes } = await tx.run(
            `UPDATE content_groups AS g SET retired_ms = ?, dead_since_ms = COALESCE(dead_since_ms, ?)
           WHERE id = ? AND compacting_ms IS NOT NULL AND retired_ms IS NULL AND NOT ${isLive}`,
            [nowMs, nowMs, groupId, JSON.stringify(listed)],
          )
          // Something live still there (an upload that found its blocks in it before it was looked past): nothing changes.
          if (changes !== 1) throw new StillLive()
          return true
        })
        .catch((err) => {
          if (err instanceof StillLive) return false
          throw err
        })
    },
  }
}

class StillLive extends Error {}

import type { Sql } from '../../shared/sql/index.ts'
import type { GroupState } from '../content/index.ts'

/** One group's bytes, live against dead, for a usage report (what retiring them saves). */
export interface GroupUsage {
  groupId: number
  state: GroupState
  /** `live`, `dead` (in its grace period: still paid for) or `retired` (no longer paid for where it could be stopped). */
  liveness: 'live' | 'dead' | 'retired'
  /** Bytes of its blocks. */
  bytes: number
  /** Padded piece size, once sealed: what a copy is paid by. */
  pieceSize?: number
  /**
   * Bytes still in use: those of a live group but its deleted files' leaves (its DAG and folder nodes, small,
   * count as live with it); 0 for a dead or retired one.
   */
  liveBytes: number
  /** The rest: all of a dead or retired group, the leaves no live file has in a live one (what compaction would win back). */
  deadBytes: number
}

/**
 * Every group's bytes, live and dead, oldest first. One query over the leaves (an admin's report, not a
 * pass's work): a leaf counts as live while a file of the tree has it.
 */
export async function groupUsage(sql: Sql): Promise<GroupUsage[]> {
  const rows = await sql.all<{
    id: number
    state: GroupState
    size: number
    piece_size: number | null
    dead_since_ms: number | null
    retired_ms: number | null
    dead_leaves: number | null
  }>(
    `SELECT g.id, g.state, g.size, g.piece_size, g.dead_since_ms, g.retired_ms, d.dead_leaves
     FROM content_groups g LEFT JOIN (
       SELECT b.group_id, SUM(b.length) AS dead_leaves FROM content_blocks b
       WHERE b.cid IN (SELECT block_cid FROM content_leaves)
         AND b.cid NOT IN (SELECT l.block_cid FROM entries e JOIN content_leaves l ON l.content_cid = e.cid)
       GROUP BY b.group_id
     ) d ON d.group_id = g.id
     ORDER BY g.id`,
  )
  return rows.map((r) => {
    const bytes = Number(r.size)
    const liveness = r.retired_ms != null ? 'retired' : r.dead_since_ms != null ? 'dead' : 'live'
    const deadBytes = liveness === 'live' ? Number(r.dead_leaves ?? 0) : bytes
    return {
      groupId: Number(r.id),
      state: r.state,
      liveness,
      bytes,
      ...(r.piece_size != null ? { pieceSize: Number(r.piece_size) } : {}),
      liveBytes: bytes - deadBytes,
      deadBytes,
    }
  })
}

import { jsonList, type Sql } from '../../shared/sql/index.ts'
import { GroupTransitionError, transitionOf, type GroupEvent, type GroupState } from './group-state.ts'
import type { GroupRecord, Repository } from './types.ts'

/** A `content_groups` row as the store returns it. */
export interface GroupRow {
  id: number
  state: GroupState
  size: number
  car_size: number | null
  piece_cid: string | null
  piece_size: number | null
  created_ms: number
  updated_ms: number
  dead_since_ms: number | null
  retired_ms: number | null
  /** 0 while only folders' directory nodes were committed into the group (schema.ts). */
  holds_files: number
  sparse_since_ms: number | null
  compacting_ms: number | null
}

export const toGroup = (r: GroupRow): GroupRecord => ({
  id: r.id,
  state: r.state,
  size: r.size,
  ...(r.piece_cid ? { pieceCid: r.piece_cid } : {}),
  ...(r.piece_size != null ? { pieceSize: r.piece_size } : {}),
  ...(r.car_size != null ? { carSize: r.car_size } : {}),
  ...(Number(r.holds_files) === 0 && r.size > 0 ? { listingsOnly: true as const } : {}),
  // Deals and retrieval checks arrive with the deal issue; nothing pretends to have any.
  retrievableCopies: 0,
  deals: [],
  createdMs: r.created_ms,
  updatedMs: r.updated_ms,
  ...(r.dead_since_ms != null ? { deadSinceMs: Number(r.dead_since_ms) } : {}),
  ...(r.retired_ms != null ? { retiredMs: Number(r.retired_ms) } : {}),
  ...(r.sparse_since_ms != null ? { sparseSinceMs: Number(r.sparse_since_ms) } : {}),
  ...(r.compacting_ms != null ? { compactingMs: Number(r.compacting_ms) } : {}),
})

/** The groups a query selects (its columns those of `content_groups`), as records. */
export const selectGroups = async (sql: Sql, text: string, params: unknown[] = []) => (await sql.all<GroupRow>(text, params)).map(toGroup)

/** The repository's verbs on the `content_groups` table alone. */
export type GroupRows = Pick<
  Repository,
  'createGroup' | 'group' | 'groupsInState' | 'allGroups' | 'groupsWithIds' | 'unsealedBytes' | 'transition' | 'recordPiece' | 'deleteGroup'
>

/**
 * The groups as stored: their rows, and their states, which change only
 * through the one transition table (group-state.ts).
 */
export function createGroupRows(sql: Sql): GroupRows {
  const integers = jsonList(sql.dialect, 'integer')
  const group = async (id: number) => {
    const row = await sql.get<GroupRow>('SELECT * FROM content_groups WHERE id = ?', [id])
    return row && toGroup(row)
  }

  /**
   * Applies `event` to a group through the one transition table, as one
   * conditional UPDATE: of two racing transitions (two processes, or two
   * requests on PostgreSQL's pool) exactly one changes the row; the other
   * finds the state moved and fails like any transition that cannot happen.
   * `set` (with its `params`) writes other columns in the same UPDATE.
   */
  async function transition(id: number, event: GroupEvent, set = '', params: unknown[] = []): Promise<GroupState> {
    const t = transitionOf(event)
    const { changes } = await sql.run(
      `UPDATE content_groups SET ${set}state = ?, updated_ms = ? WHERE id = ? AND state IN (${t.from.map(() => '?').join(', ')})`,
      [...params, t.to, Date.now(), id, ...t.from],
    )
    if (changes === 1) return t.to
    const g = await group(id)
    if (!g) throw new Error(`No group ${id}`)
    throw new GroupTransitionError(`A ${g.state} group cannot ${event}`)
  }

  return {
    async createGroup(): Promise<number> {
      const now = Date.now()
      return (await sql.get<{ id: number }>(
        `INSERT INTO content_groups (state, created_ms, updated_ms, holds_files) VALUES ('writable', ?, ?, 0) RETURNING id`,
        [now, now],
      ))!.id
    },
    group,
    groupsInState: (state: GroupState) => selectGroups(sql, 'SELECT * FROM content_groups WHERE state = ? ORDER BY id', [state]),
    allGroups: () => selectGroups(sql, 'SELECT * FROM content_groups ORDER BY id'),
    groupsWithIds: (ids: number[]) =>
      ids.length === 0
        ? Promise.resolve([])
        : selectGroups(sql, `SELECT * FROM content_groups WHERE id IN (${integers}) ORDER BY id`, [JSON.stringify(ids)]),
    unsealedBytes: async () =>
      Number(
        (await sql.get<{ n: number | null }>(`SELECT SUM(size) AS n FROM content_groups WHERE state IN ('writable', 'full')`))?.n ?? 0,
      ),
    transition: (id: number, event: GroupEvent) => transition(id, event),
    async recordPiece(id: number, piece: { carSize: number; pieceCid: string; pieceSize: number }): Promise<void> {
      await transition(id, 'carWritten', 'car_size = ?, piece_cid = ?, piece_size = ?, ', [piece.carSize, piece.pieceCid, piece.pieceSize])
    },
    async deleteGroup(id: number): Promise<void> {
      await sql.run('DELETE FROM content_groups WHERE id = ?', [id])
    },
  }
}

import { jsonList, type Sql } from '../../shared/sql/index.ts'
import { GroupTransitionError, transitionOf, type GroupEvent, type GroupState } from './group-state.ts'
import type { BlockLocation, GroupRecord, LeafRow, NewContent, Repository, StoredBlock } from './types.ts'

interface GroupRow {
  id: number
  state: GroupState
  size: number
  car_size: number | null
  piece_cid: string | null
  piece_size: number | null
  created_ms: number
  updated_ms: number
}

const toGroup = (r: GroupRow): GroupRecord => ({
  id: r.id,
  state: r.state,
  size: r.size,
  ...(r.piece_cid ? { pieceCid: r.piece_cid } : {}),
  ...(r.piece_size != null ? { pieceSize: r.piece_size } : {}),
  ...(r.car_size != null ? { carSize: r.car_size } : {}),
  // Deals and retrieval checks arrive with the deal issue; nothing pretends to have any.
  retrievableCopies: 0,
  deals: [],
  createdMs: r.created_ms,
  updatedMs: r.updated_ms,
})

/** Rows per multi-row INSERT; smaller remainders go in powers of two, so few statement texts exist. */
const BATCH_ROWS = 256
function* batches<T>(rows: readonly T[]): Generator<readonly T[]> {
  for (let i = 0; i < rows.length;) {
    const left = rows.length - i
    const n = left >= BATCH_ROWS ? BATCH_ROWS : 2 ** Math.floor(Math.log2(left))
    yield rows.slice(i, i + n)
    i += n
  }
}
const valuesOf = (rows: number, columns: number) =>
  Array(rows)
    .fill(`(${Array(columns).fill('?').join(', ')})`)
    .join(', ')

/** All SQL of the content store. Multi-row writes always run in one transaction. */
export function createRepository(sql: Sql): Repository {
  const texts = jsonList(sql.dialect)
  const integers = jsonList(sql.dialect, 'integer')
  const groups = async (text: string, params: unknown[] = []) => (await sql.all<GroupRow>(text, params)).map(toGroup)
  const group = async (id: number) => {
    const row = await sql.get<GroupRow>('SELECT * FROM content_groups WHERE id = ?', [id])
    return row && toGroup(row)
  }

  /**
   * Applies `event` to a group through the one transition table, as one
   * conditional UPDATE: of two racing transitions (two processes, or two
   * requests on PostgreSQL's pool) exactly one changes the row; the other
   * finds the state moved and fails like any transition that cannot happen.
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
        `INSERT INTO content_groups (state, created_ms, updated_ms) VALUES ('writable', ?, ?) RETURNING id`,
        [now, now],
      ))!.id
    },
    group,
    groupsInState: (state: GroupState) => groups('SELECT * FROM content_groups WHERE state = ? ORDER BY id', [state]),
    allGroups: () => groups('SELECT * FROM content_groups ORDER BY id'),
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
    block: (cid: string) =>
      sql.get<BlockLocation>('SELECT group_id AS "groupId", "offset", length FROM content_blocks WHERE cid = ?', [cid]),
    groupBlocks: (id: number) =>
      sql.all<StoredBlock>('SELECT cid, group_id AS "groupId", "offset", length FROM content_blocks WHERE group_id = ? ORDER BY "offset"', [
        id,
      ]),
    sampleBlock: async (id: number) =>
      (await sql.get<{ cid: string }>('SELECT cid FROM content_blocks WHERE group_id = ? ORDER BY random() LIMIT 1', [id]))?.cid,
    firstBlock: async (id: number) =>
      (await sql.get<{ cid: string }>('SELECT cid FROM content_blocks WHERE group_id = ? ORDER BY "offset" LIMIT 1', [id]))?.cid,
    groupBlockCount: async (id: number) =>
      (await sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM content_blocks WHERE group_id = ?', [id]))!.n,
    groupRoots: async (id: number) =>
      (
        await sql.all<{ cid: string }>(
          `SELECT c.cid FROM contents c JOIN content_blocks b ON b.cid = c.cid WHERE b.group_id = ? ORDER BY b."offset"`,
          [id],
        )
      ).map((r) => r.cid),
    content: (cid: string) =>
      sql.get<{ cid: string; size: number; dagSize: number }>('SELECT cid, size, dag_size AS "dagSize" FROM contents WHERE cid = ?', [cid]),
    leavesInRange: (cid: string, start: number, end: number) =>
      sql.all<LeafRow>(
        `SELECT l.file_offset AS "fileOffset", l.block_cid AS cid, b.group_id AS "groupId", b."offset", b.length
         FROM content_leaves l JOIN content_blocks b ON b.cid = l.block_cid
         WHERE l.content_cid = ? AND l.file_offset <= ? AND l.file_offset + l.length > ?
         ORDER BY l.idx`,
        [cid, end, start],
      ),
    groupsOf: (cid: string) =>
      groups('SELECT g.* FROM content_group_links cg JOIN content_groups g ON g.id = cg.group_id WHERE cg.content_cid = ? ORDER BY g.id', [
        cid,
      ]),
    async groupIdsOfMany(cids: string[]): Promise<Map<string, number[]>> {
      const out = new Map<string, number[]>()
      if (cids.length === 0) return out
      const rows = await sql.all<{ content_cid: string; group_id: number }>(
        `SELECT content_cid, group_id FROM content_group_links WHERE content_cid IN (${texts}) ORDER BY group_id`,
        [JSON.stringify(cids)],
      )
      for (const r of rows) out.set(r.content_cid, [...(out.get(r.content_cid) ?? []), Number(r.group_id)])
      return out
    },
    groupsWithIds: (ids: number[]) =>
      ids.length === 0
        ? Promise.resolve([])
        : groups(`SELECT * FROM content_groups WHERE id IN (${integers}) ORDER BY id`, [JSON.stringify(ids)]),
    async groupsOfMany(cids: string[]): Promise<Map<string, GroupRecord[]>> {
      const out = new Map<string, GroupRecord[]>()
      if (cids.length === 0) return out
      const rows = await sql.all<GroupRow & { content_cid: string }>(
        `SELECT cg.content_cid, g.* FROM content_group_links cg JOIN content_groups g ON g.id = cg.group_id
         WHERE cg.content_cid IN (${texts}) ORDER BY g.id`,
        [JSON.stringify(cids)],
      )
      for (const r of rows) {
        const list = out.get(r.content_cid)
        if (list) list.push(toGroup(r))
        else out.set(r.content_cid, [toGroup(r)])
      }
      return out
    },

    async commitContent(c: NewContent): Promise<void> {
      await sql.transaction(async (tx) => {
        // The first writer of a block wins; link the group that really holds it.
        const holder = new Map<string, number>()
        const added = new Map<number, number>()
        for (const rows of batches(c.blocks)) {
          const inserted = await tx.all<{ cid: string; group_id: number; length: number }>(
            `INSERT INTO content_blocks (cid, group_id, "offset", length) VALUES ${valuesOf(rows.length, 4)} ON CONFLICT (cid) DO NOTHING RETURNING cid, group_id, length`,
            rows.flatMap((b) => [b.cid, b.groupId, b.offset, b.length]),
          )
          for (const r of inserted) {
            holder.set(r.cid, r.group_id)
            added.set(r.group_id, (added.get(r.group_id) ?? 0) + r.length)
          }
        }
        for (const [groupId, bytes] of added) await tx.run('UPDATE content_groups SET size = size + ? WHERE id = ?', [bytes, groupId])
        const known = c.blocks.filter((b) => !holder.has(b.cid)).map((b) => b.cid)
        if (known.length > 0) {
          for (const r of await tx.all<{ cid: string; group_id: number }>(
            `SELECT cid, group_id FROM content_blocks WHERE cid IN (${texts})`,
            [JSON.stringify(known)],
          )) {
            holder.set(r.cid, r.group_id)
          }
        }
        const { changes } = await tx.run(
          'INSERT INTO contents (cid, size, dag_size, created_ms) VALUES (?, ?, ?, ?) ON CONFLICT (cid) DO NOTHING',
          [c.cid, c.size, c.dagSize, Date.now()],
        )
        if (changes === 0) return
        let offset = 0
        const leaves = c.leaves.map((leaf, i) => {
          const row = [c.cid, i, offset, leaf.length, leaf.cid]
          offset += leaf.length
          return row
        })
        for (const rows of batches(leaves)) {
          await tx.run(
            `INSERT INTO content_leaves (content_cid, idx, file_offset, length, block_cid) VALUES ${valuesOf(rows.length, 5)}`,
            rows.flat(),
          )
        }
        const linked = [...new Set(holder.values())]
        for (const rows of batches(linked)) {
          await tx.run(
            `INSERT INTO content_group_links (content_cid, group_id) VALUES ${valuesOf(rows.length, 2)} ON CONFLICT DO NOTHING`,
            rows.flatMap((g) => [c.cid, g]),
          )
        }
      })
    },
  }
}

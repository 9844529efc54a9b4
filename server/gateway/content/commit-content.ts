import { jsonList, type Sql } from '../../shared/sql/index.ts'
import { GatewayError } from '../errors.ts'
import type { NewContent } from './types.ts'

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

/**
 * Records a finished ingest in one transaction: its blocks, the content and
 * its leaves, and the groups it lives in, in multi-row statements (one round
 * trip per few hundred rows on PostgreSQL, not three per block). A content
 * already stored gets no second set of leaves; its blocks stored again
 * because their group was retired (ingest looks past those) move to the new
 * group, and so do its links.
 */
export async function commitContent(sql: Sql, c: NewContent): Promise<void> {
  const texts = jsonList(sql.dialect)
  await sql.transaction(async (tx) => {
    // The first writer of a block wins; link the group that really holds it.
    const holder = new Map<string, number>()
    const added = new Map<number, number>()
    for (const rows of batches(c.blocks)) {
      const cids = JSON.stringify(rows.map((b) => b.cid))
      // A block written again out of a group looked past keeps its place in that group's CAR, which its copies hold.
      await tx.run(
        `INSERT INTO content_blocks_moved (cid, group_id, "offset", length)
         SELECT cid, group_id, "offset", length FROM content_blocks WHERE cid IN (${texts}) AND group_id IN (${LOOKED_PAST}) ON CONFLICT DO NOTHING`,
        [cids],
      )
      const inserted = await tx.all<{ cid: string; group_id: number; length: number }>(
        `INSERT INTO content_blocks (cid, group_id, "offset", length) VALUES ${valuesOf(rows.length, 4)} ON CONFLICT (cid) DO UPDATE SET group_id = excluded.group_id, "offset" = excluded."offset", length = excluded.length
         WHERE content_blocks.group_id IN (${LOOKED_PAST}) AND content_blocks.group_id <> excluded.group_id RETURNING cid, group_id, length`,
        rows.flatMap((b) => [b.cid, b.groupId, b.offset, b.length]),
      )
      // Found in such a group by an upload that started before it was looked past: it did not move after all.
      await tx.run(
        `DELETE FROM content_blocks_moved WHERE cid IN (${texts})
         AND EXISTS (SELECT 1 FROM content_blocks b WHERE b.cid = content_blocks_moved.cid AND b.group_id = content_blocks_moved.group_id)`,
        [cids],
      )
      for (const r of inserted) {
        holder.set(r.cid, r.group_id)
        added.set(r.group_id, (added.get(r.group_id) ?? 0) + r.length)
      }
    }
    // A file's bytes in a group end its wait as a group of listings only (group-closing.ts).
    const holds = c.kind === 'file' ? ', holds_files = 1' : ''
    for (const [groupId, bytes] of added) await tx.run(`UPDATE content_groups SET size = size + ?${holds} WHERE id = ?`, [bytes, groupId])
    const known = c.blocks.filter((b) => !holder.has(b.cid)).map((b) => b.cid)
    if (known.length > 0) {
      const rows = await tx.all<{ cid: string; group_id: number; retired: number }>(
        `SELECT cid, group_id, CASE WHEN group_id IN (${RETIRED}) THEN 1 ELSE 0 END AS retired FROM content_blocks WHERE cid IN (${texts})`,
        [JSON.stringify(known)],
      )
      // Found in a group that was retired while this upload ran: its bytes were not written again. The client's
      // retry finds the group retired and stores them. (One being compacted still holds them: the content is linked
      // to it, and the compaction writes it again.)
      if (rows.some((r) => Number(r.retired) === 1)) throw new GroupRetiredDuringUpload()
      for (const r of rows) holder.set(r.cid, r.group_id)
    }
    const { changes } = await tx.run(
      'INSERT INTO contents (cid, size, dag_size, created_ms) VALUES (?, ?, ?, ?) ON CONFLICT (cid) DO NOTHING',
      [c.cid, c.size, c.dagSize, Date.now()],
    )
    if (changes === 0) {
      // Stored before: where its blocks are now, which differs once a group of it was retired (its blocks stored
      // again by this upload or an earlier one of other content).
      await relink(tx, c.cid, [...new Set(holder.values())])
      return
    }
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
    await link(tx, c.cid, [...new Set(holder.values())])
  })
}

/** The retired groups, as a sub-query. */
const RETIRED = 'SELECT id FROM content_groups WHERE retired_ms IS NOT NULL'
/** The groups an upload does not deduplicate against: retired ones, and ones being compacted (deals/compact.ts). */
const LOOKED_PAST = 'SELECT id FROM content_groups WHERE retired_ms IS NOT NULL OR compacting_ms IS NOT NULL'

/** A retired group's block went into a new upload before its group was retired: the upload is to be sent again. */
export class GroupRetiredDuringUpload extends GatewayError {
  constructor() {
    super(503, 'UPLOAD_RETRY', 'Some of these bytes were in a group of deleted files retired meanwhile; send the file again', {
      'Retry-After': '1',
    })
  }
}

/** Links the content to the groups holding its blocks; hidden (`behind` a group being compacted) until that one is retired. */
async function link(tx: Sql, cid: string, groupIds: number[], behind: number | null = null): Promise<void> {
  for (const rows of batches(groupIds)) {
    await tx.run(
      `INSERT INTO content_group_links (content_cid, group_id, behind_group_id) VALUES ${valuesOf(rows.length, 3)} ON CONFLICT DO NOTHING`,
      rows.flatMap((g) => [cid, g, behind]),
    )
  }
}

/**
 * The content's links to retired groups go; its links to the groups holding its blocks now are made. Written
 * again out of a group being compacted, which still holds it whole with its copies, the content keeps showing
 * that group: the new links stay hidden behind it until it is retired, once they have their own copies.
 */
async function relink(tx: Sql, cid: string, groupIds: number[]): Promise<void> {
  await tx.run(`DELETE FROM content_group_links WHERE content_cid = ? AND group_id IN (${RETIRED})`, [cid])
  const compacted = await tx.get<{ id: number | null }>(
    `SELECT MIN(l.group_id) AS id FROM content_group_links l JOIN content_groups g ON g.id = l.group_id
     WHERE l.content_cid = ? AND l.behind_group_id IS NULL AND g.compacting_ms IS NOT NULL AND g.retired_ms IS NULL
       AND l.group_id NOT IN (${jsonList(tx.dialect, 'integer')})`,
    [cid, JSON.stringify(groupIds)],
  )
  await link(tx, cid, groupIds, compacted?.id == null ? null : Number(compacted.id))
}

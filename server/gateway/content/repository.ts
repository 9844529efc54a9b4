import { jsonList, type Sql } from '../../shared/sql/index.ts'
import { commitContent } from './commit-content.ts'
import { createGroupRows, selectGroups, toGroup, type GroupRow } from './group-rows.ts'
import type { BlockLocation, GroupRecord, LeafRow, Repository, StoredBlock } from './types.ts'

/**
 * All SQL of the content store: the groups' rows and states (group-rows.ts),
 * reads of blocks, contents and the groups each content lives in (here), and
 * an ingest's one write (commit-content.ts). Multi-row writes always run in
 * one transaction.
 */
export function createRepository(sql: Sql): Repository {
  const texts = jsonList(sql.dialect)

  return {
    ...createGroupRows(sql),
    block: (cid: string) =>
      sql.get<BlockLocation>(
        `SELECT b.group_id AS "groupId", b."offset", b.length FROM content_blocks b JOIN content_groups g ON g.id = b.group_id
         WHERE b.cid = ? AND g.retired_ms IS NULL AND g.compacting_ms IS NULL`,
        [cid],
      ),
    groupBlocks: (id: number) =>
      sql.all<StoredBlock>(`SELECT cid, group_id AS "groupId", "offset", length FROM ${IN_CAR} b ORDER BY "offset"`, [id, id]),
    sampleBlock: async (id: number) =>
      (await sql.get<{ cid: string }>(`SELECT cid FROM ${IN_CAR} b ORDER BY random() LIMIT 1`, [id, id]))?.cid,
    firstBlock: async (id: number) =>
      (await sql.get<{ cid: string }>(`SELECT cid FROM ${IN_CAR} b ORDER BY "offset" LIMIT 1`, [id, id]))?.cid,
    groupBlockCount: async (id: number) =>
      (await sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM content_blocks WHERE group_id = ?', [id]))!.n,
    groupRoots: async (id: number) =>
      (await sql.all<{ cid: string }>(`SELECT c.cid FROM contents c JOIN ${IN_CAR} b ON b.cid = c.cid ORDER BY b."offset"`, [id, id])).map(
        (r) => r.cid,
      ),
    content: (cid: string) =>
      sql.get<{ cid: string; size: number; dagSize: number }>('SELECT cid, size, dag_size AS "dagSize" FROM contents WHERE cid = ?', [cid]),
    storedWhole: async (cid: string) =>
      (await sql.get(
        `SELECT 1 AS x FROM contents c WHERE c.cid = ? AND NOT EXISTS (
           SELECT 1 FROM content_group_links l JOIN content_groups g ON g.id = l.group_id
           WHERE l.content_cid = c.cid AND (g.retired_ms IS NOT NULL OR g.compacting_ms IS NOT NULL))`,
        [cid],
      )) !== undefined,
    leavesInRange: (cid: string, start: number, end: number) =>
      sql.all<LeafRow>(
        `SELECT l.file_offset AS "fileOffset", l.block_cid AS cid, b.group_id AS "groupId", b."offset", b.length
         FROM content_leaves l JOIN content_blocks b ON b.cid = l.block_cid
         WHERE l.content_cid = ? AND l.file_offset <= ? AND l.file_offset + l.length > ?
         ORDER BY l.idx`,
        [cid, end, start],
      ),
    groupsOf: (cid: string) =>
      selectGroups(
        sql,
        'SELECT g.* FROM content_group_links cg JOIN content_groups g ON g.id = cg.group_id WHERE cg.content_cid = ? AND cg.behind_group_id IS NULL ORDER BY g.id',
        [cid],
      ),
    async groupIdsOfMany(cids: string[]): Promise<Map<string, number[]>> {
      const out = new Map<string, number[]>()
      if (cids.length === 0) return out
      const rows = await sql.all<{ content_cid: string; group_id: number }>(
        `SELECT content_cid, group_id FROM content_group_links WHERE content_cid IN (${texts}) AND behind_group_id IS NULL ORDER BY group_id`,
        [JSON.stringify(cids)],
      )
      for (const r of rows) out.set(r.content_cid, [...(out.get(r.content_cid) ?? []), Number(r.group_id)])
      return out
    },
    async groupsOfMany(cids: string[]): Promise<Map<string, GroupRecord[]>> {
      const out = new Map<string, GroupRecord[]>()
      if (cids.length === 0) return out
      const rows = await sql.all<GroupRow & { content_cid: string }>(
        `SELECT cg.content_cid, g.* FROM content_group_links cg JOIN content_groups g ON g.id = cg.group_id
         WHERE cg.content_cid IN (${texts}) AND cg.behind_group_id IS NULL ORDER BY g.id`,
        [JSON.stringify(cids)],
      )
      for (const r of rows) {
        const list = out.get(r.content_cid)
        if (list) list.push(toGroup(r))
        else out.set(r.content_cid, [toGroup(r)])
      }
      return out
    },
    commitContent: (c) => commitContent(sql, c),
  }
}

/**
 * The blocks of group `?` (given twice) as its CAR holds them: those still read from it, and those written again
 * elsewhere since (a compaction, a retired group's bytes uploaded again), which its copies still hold.
 */
const IN_CAR = `(SELECT cid, group_id, "offset", length FROM content_blocks WHERE group_id = ?
  UNION ALL SELECT cid, group_id, "offset", length FROM content_blocks_moved WHERE group_id = ?)`

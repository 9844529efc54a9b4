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
         WHERE b.cid = ? AND g.retired_ms IS NULL`,
        [cid],
      ),
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
    storedWhole: async (cid: string) =>
      (await sql.get(
        `SELECT 1 AS x FROM contents c WHERE c.cid = ? AND NOT EXISTS (
           SELECT 1 FROM content_group_links l JOIN content_groups g ON g.id = l.group_id WHERE l.content_cid = c.cid AND g.retired_ms IS NOT NULL)`,
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
        'SELECT g.* FROM content_group_links cg JOIN content_groups g ON g.id = cg.group_id WHERE cg.content_cid = ? ORDER BY g.id',
        [cid],
      ),
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
    commitContent: (c) => commitContent(sql, c),
  }
}

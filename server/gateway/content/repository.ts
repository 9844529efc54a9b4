import type { Db } from '../../shared/db.ts'
import { nextGroupState, type GroupEvent, type GroupState } from './group-state.ts'
import type { GroupRecord } from './types.ts'

export interface BlockLocation {
  groupId: number
  offset: number
  length: number
}

export interface StoredBlock extends BlockLocation {
  cid: string
}

export interface LeafRow extends BlockLocation {
  fileOffset: number
}

export interface NewContent {
  cid: string
  size: number
  dagSize: number
  blocks: StoredBlock[]
  /** Raw leaves in file order. */
  leaves: { cid: string; length: number }[]
}

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

/** All SQL of the content store. Multi-row writes always run in one transaction. */
export function createRepository(db: Db) {
  const q = {
    insertGroup: db.prepare(`INSERT INTO content_groups (state, created_ms, updated_ms) VALUES ('writable', ?, ?)`),
    group: db.prepare('SELECT * FROM content_groups WHERE id = ?'),
    groupsInState: db.prepare('SELECT * FROM content_groups WHERE state = ? ORDER BY id'),
    allGroups: db.prepare('SELECT * FROM content_groups ORDER BY id'),
    setState: db.prepare('UPDATE content_groups SET state = ?, updated_ms = ? WHERE id = ?'),
    setPiece: db.prepare('UPDATE content_groups SET car_size = ?, piece_cid = ?, piece_size = ?, state = ?, updated_ms = ? WHERE id = ?'),
    addSize: db.prepare('UPDATE content_groups SET size = size + ? WHERE id = ?'),
    deleteGroup: db.prepare('DELETE FROM content_groups WHERE id = ?'),
    block: db.prepare('SELECT group_id AS groupId, offset, length FROM content_blocks WHERE cid = ?'),
    insertBlock: db.prepare('INSERT OR IGNORE INTO content_blocks (cid, group_id, offset, length) VALUES (?, ?, ?, ?)'),
    groupBlocks: db.prepare('SELECT cid, group_id AS groupId, offset, length FROM content_blocks WHERE group_id = ? ORDER BY offset'),
    sampleBlock: db.prepare('SELECT cid FROM content_blocks WHERE group_id = ? ORDER BY random() LIMIT 1').pluck(),
    groupBlockCount: db.prepare('SELECT COUNT(*) AS n FROM content_blocks WHERE group_id = ?'),
    groupRoots: db.prepare(`SELECT c.cid FROM contents c JOIN content_blocks b ON b.cid = c.cid
      WHERE b.group_id = ? ORDER BY b.offset`),
    content: db.prepare('SELECT cid, size, dag_size AS dagSize FROM contents WHERE cid = ?'),
    insertContent: db.prepare('INSERT OR IGNORE INTO contents (cid, size, dag_size, created_ms) VALUES (?, ?, ?, ?)'),
    insertLeaf: db.prepare('INSERT INTO content_leaves (content_cid, idx, file_offset, length, block_cid) VALUES (?, ?, ?, ?, ?)'),
    insertLink: db.prepare('INSERT OR IGNORE INTO content_group_links (content_cid, group_id) VALUES (?, ?)'),
    leavesInRange: db.prepare(`SELECT l.file_offset AS fileOffset, b.group_id AS groupId, b.offset, b.length
      FROM content_leaves l JOIN content_blocks b ON b.cid = l.block_cid
      WHERE l.content_cid = ? AND l.file_offset <= ? AND l.file_offset + l.length > ?
      ORDER BY l.idx`),
    groupsOf: db.prepare(`SELECT g.* FROM content_group_links cg JOIN content_groups g ON g.id = cg.group_id
      WHERE cg.content_cid = ? ORDER BY g.id`),
  }

  const group = (id: number) => {
    const row = q.group.get(id) as GroupRow | undefined
    return row && toGroup(row)
  }

  return {
    createGroup(): number {
      const now = Date.now()
      return Number(q.insertGroup.run(now, now).lastInsertRowid)
    },
    group,
    groupsInState: (state: GroupState) => (q.groupsInState.all(state) as GroupRow[]).map(toGroup),
    allGroups: () => (q.allGroups.all() as GroupRow[]).map(toGroup),
    /** Applies `event` to a group through the one transition table; returns the new state. */
    transition(id: number, event: GroupEvent): GroupState {
      return db.transaction(() => {
        const g = group(id)
        if (!g) throw new Error(`No group ${id}`)
        const to = nextGroupState(g.state, event)
        q.setState.run(to, Date.now(), id)
        return to
      })()
    },
    recordPiece(id: number, piece: { carSize: number; pieceCid: string; pieceSize: number }): void {
      db.transaction(() => {
        const g = group(id)
        if (!g) throw new Error(`No group ${id}`)
        const to = nextGroupState(g.state, 'carWritten')
        q.setPiece.run(piece.carSize, piece.pieceCid, piece.pieceSize, to, Date.now(), id)
      })()
    },
    deleteGroup: (id: number) => void q.deleteGroup.run(id),
    block: (cid: string) => q.block.get(cid) as BlockLocation | undefined,
    groupBlocks: (id: number) => q.groupBlocks.iterate(id) as IterableIterator<StoredBlock>,
    /** A random block of the group (retrieval checks sample one). */
    sampleBlock: (id: number) => q.sampleBlock.get(id) as string | undefined,
    groupBlockCount: (id: number) => (q.groupBlockCount.get(id) as { n: number }).n,
    groupRoots: (id: number) => (q.groupRoots.all(id) as { cid: string }[]).map((r) => r.cid),
    content: (cid: string) => q.content.get(cid) as { cid: string; size: number; dagSize: number } | undefined,
    leavesInRange: (cid: string, start: number, end: number) => q.leavesInRange.all(cid, end, start) as LeafRow[],
    groupsOf: (cid: string) => (q.groupsOf.all(cid) as GroupRow[]).map(toGroup),

    /** Records a finished ingest in one transaction: its blocks, the content and its leaves. */
    commitContent(c: NewContent): void {
      db.transaction(() => {
        const groups = new Set<number>()
        for (const b of c.blocks) {
          if (q.insertBlock.run(b.cid, b.groupId, b.offset, b.length).changes === 1) q.addSize.run(b.length, b.groupId)
          // The first writer of a block wins; link the group that really holds it.
          groups.add((q.block.get(b.cid) as BlockLocation).groupId)
        }
        if (q.insertContent.run(c.cid, c.size, c.dagSize, Date.now()).changes === 0) return
        let offset = 0
        c.leaves.forEach((leaf, i) => {
          q.insertLeaf.run(c.cid, i, offset, leaf.length, leaf.cid)
          offset += leaf.length
        })
        for (const g of groups) q.insertLink.run(c.cid, g)
      })()
    },
  }
}

export type Repository = ReturnType<typeof createRepository>

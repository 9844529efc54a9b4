import { afterEach, beforeEach, expect, it } from 'vitest'
import { GroupTransitionError } from '../../../server/gateway/content/group-state.ts'
import { createRepository } from '../../../server/gateway/content/repository.ts'
import { migrateContent } from '../../../server/gateway/content/schema.ts'
import type { Sql } from '../../../server/shared/sql/index.ts'
import { describeEachStore } from '../../helpers/stores.ts'

describeEachStore('content records', ({ open }) => {
  let sql: Sql
  beforeEach(async () => {
    sql = await open('gateway')
    await migrateContent(sql)
  })
  afterEach(() => sql.close())

  it('lets exactly one of two racing transitions of a group happen; the other fails as an impossible one', async () => {
    const repo = createRepository(sql)
    for (let round = 0; round < 10; round++) {
      const id = await repo.createGroup()
      // The idle timer and a full group close it at once.
      const results = await Promise.allSettled([repo.transition(id, 'seal'), repo.transition(id, 'seal')])
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
      const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
      expect(refused.reason).toBeInstanceOf(GroupTransitionError)
      expect((await repo.group(id))!.state).toBe('full')
    }
  })

  it('records a piece only for a full group, once', async () => {
    const repo = createRepository(sql)
    const id = await repo.createGroup()
    await expect(repo.recordPiece(id, { carSize: 10, pieceCid: 'baga-x', pieceSize: 128 })).rejects.toThrow(GroupTransitionError)
    await repo.transition(id, 'seal')
    const piece = { carSize: 10, pieceCid: 'baga-x', pieceSize: 128 }
    const results = await Promise.allSettled([repo.recordPiece(id, piece), repo.recordPiece(id, { ...piece, pieceCid: 'baga-y' })])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const g = (await repo.group(id))!
    expect(g).toMatchObject({ state: 'VRCARDone', carSize: 10, pieceSize: 128 })
    expect(g.pieceCid).toBe(results[0].status === 'fulfilled' ? 'baga-x' : 'baga-y')
  })

  it('records an ingest in one go: blocks (first writer wins), content, leaves and group links', async () => {
    const repo = createRepository(sql)
    const [a, b] = [await repo.createGroup(), await repo.createGroup()]
    // 600 blocks: more than one multi-row statement.
    const blocks = Array.from({ length: 600 }, (_, i) => ({
      cid: `block-${i}`,
      groupId: i < 300 ? a : b,
      offset: (i % 300) * 10,
      length: 10,
    }))
    await repo.commitContent({
      kind: 'file',
      cid: 'file-1',
      size: 6000,
      dagSize: 6100,
      blocks,
      leaves: blocks.map((x) => ({ cid: x.cid, length: 10 })),
    })
    // The same block again from another group: it stays where it was first written.
    await repo.commitContent({
      kind: 'file',
      cid: 'file-2',
      size: 10,
      dagSize: 10,
      blocks: [{ cid: 'block-0', groupId: b, offset: 9999, length: 10 }],
      leaves: [{ cid: 'block-0', length: 10 }],
    })
    expect(await repo.block('block-0')).toEqual({ groupId: a, offset: 0, length: 10 })
    expect((await repo.group(a))!.size).toBe(3000)
    expect((await repo.group(b))!.size).toBe(3000)
    expect((await repo.groupsOf('file-2')).map((g) => g.id)).toEqual([a])
    expect((await repo.groupsOf('file-1')).map((g) => g.id)).toEqual([a, b])
    expect(await repo.leavesInRange('file-1', 2995, 3004)).toEqual([
      { fileOffset: 2990, cid: 'block-299', groupId: a, offset: 2990, length: 10 },
      { fileOffset: 3000, cid: 'block-300', groupId: b, offset: 0, length: 10 },
    ])
    const many = await repo.groupsOfMany(['file-1', 'file-2', 'nothing'])
    expect([...many.keys()].sort()).toEqual(['file-1', 'file-2'])
  })
})

import { randomBytes } from 'node:crypto'
import { afterEach, expect, it } from 'vitest'
import { directoryDag } from '../../../server/gateway/folder-cid.ts'
import { createNamespace, type Namespace } from '../../../server/gateway/namespace.ts'
import { createLiveness, type Liveness } from '../../../server/gateway/retire/liveness.ts'
import { groupUsage } from '../../../server/gateway/retire/usage.ts'
import { describeEachStore } from '../../helpers/stores.ts'
import { chunksOf, collect, makeStore, type TestStore } from '../content/helpers.ts'

/**
 * Which groups are live, on both stores: a file of the tree whose content has
 * blocks in the group, or a folder's current listing. A group is marked dead
 * once, from when it was first seen so; a file coming back clears the mark;
 * a retired group's bytes PUT again are stored anew.
 */
let t: TestStore | undefined
afterEach(async () => {
  await t?.cleanup()
  t = undefined
})

describeEachStore('liveness of groups', ({ location }) => {
  async function setUp(): Promise<{
    tree: Namespace
    liveness: Liveness
    listed: string[]
    store: (path: string, bytes: Uint8Array) => Promise<string>
  }> {
    t = await makeStore({ where: location() })
    const tree = await createNamespace(t.sql)
    const listed: string[] = []
    const liveness = createLiveness({ sql: t.sql, listings: async () => listed })
    const store = async (path: string, bytes: Uint8Array) => {
      const r = await t!.store.ingest(chunksOf(bytes))
      await tree.putFile(path, r)
      return r.cid
    }
    return { tree, liveness, listed, store }
  }
  const seal = async () => {
    await t!.store.sealWritable()
    await t!.store.settled()
  }
  const groupsOf = async (cid: string) => (await t!.store.groupsOf(cid)).map((g) => g.id)

  it('marks a group dead when its only file is deleted, keeps the first mark, and clears it when the same bytes come back', async () => {
    const { tree, liveness, store } = await setUp()
    const a = randomBytes(100_000)
    const cidA = await store('/a.bin', a)
    await seal()
    await store('/c.bin', randomBytes(50_000))
    await store('/d.bin', randomBytes(50_000))
    await seal()
    expect(await liveness.mark(1_000)).toEqual({ died: [], revived: [] })

    await tree.remove('/a.bin')
    await tree.remove('/c.bin')
    // Group 2 still holds d.bin: only group 1 is dead.
    expect(await liveness.mark(2_000)).toEqual({ died: [1], revived: [] })
    expect(await liveness.mark(3_000)).toEqual({ died: [], revived: [] })
    expect((await t!.store.group(1))!.deadSinceMs).toBe(2_000)
    expect((await t!.store.group(2))!.deadSinceMs).toBeUndefined()

    // Restored: the same bytes, the same CID, the same group, live again.
    expect(await store('/restored.bin', a)).toBe(cidA)
    expect(await liveness.mark(4_000)).toEqual({ died: [], revived: [1] })
    expect(await liveness.retire(1, 5_000)).toBe(false)
    expect((await t!.store.group(1))!.deadSinceMs).toBeUndefined()
  })

  it("keeps a folder's current listing live and lets its older listings die", async () => {
    const { liveness, listed, store } = await setUp()
    const cid = await store('/f.bin', randomBytes(10_000))
    await seal()
    const listing = await directoryDag([{ name: 'f.bin', cid, dagSize: 10_011 }])
    await t!.store.storeDirectory({ cid: listing.cid, dagSize: listing.dagSize, nodes: listing.nodes })
    await seal()
    const [group] = await groupsOf(listing.cid)
    expect(group).toBe(2)
    listed.push(listing.cid)
    expect((await liveness.mark(1_000)).died).toEqual([])
    // The folder changed: this listing is an old one.
    listed.pop()
    expect((await liveness.mark(2_000)).died).toEqual([2])
  })

  it('retires a dead group once; its bytes PUT again go into a new group, and the usage counts what is dead', async () => {
    const { tree, liveness, store } = await setUp()
    const a = randomBytes(300_000)
    const cidA = await store('/a.bin', a)
    await seal()
    const b = randomBytes(100_000)
    await store('/b.bin', b)
    await store('/c.bin', randomBytes(100_000))
    await seal()
    await tree.remove('/a.bin')
    await tree.remove('/c.bin')
    await liveness.mark(1_000)
    expect(await liveness.retire(1, 2_000)).toBe(true)
    expect(await liveness.retire(1, 3_000)).toBe(false)
    expect((await t!.store.group(1))!.retiredMs).toBe(2_000)

    const usage = await groupUsage(t!.sql)
    expect(usage.map((u) => [u.groupId, u.liveness, u.deadBytes])).toEqual([
      [1, 'retired', usage[0].bytes],
      // c.bin's 100 000 bytes of leaves are dead in group 2; b.bin and the DAG nodes live.
      [2, 'live', 100_000],
    ])
    expect(usage[1].liveBytes).toBe(usage[1].bytes - 100_000)

    // Restored after the group was retired: its copies are going, so the bytes are stored again, elsewhere.
    expect(await store('/a.bin', a)).toBe(cidA)
    expect(await groupsOf(cidA)).toEqual([3])
    expect((await collect(t!.store.read(cidA))).equals(a)).toBe(true)
    await seal()
    expect((await t!.store.group(3))!.state).toBe('ready_for_deals')
    expect((await liveness.mark(4_000)).died).toEqual([])
  })

  it('content whose blocks an earlier upload stored again after their group was retired lives where they are now', async () => {
    const { tree, liveness, store } = await setUp()
    // z.bin is x.bin's first leaf (256 KiB chunks): one raw block, shared.
    const x = randomBytes(400_000)
    const z = x.subarray(0, 262_144)
    await store('/x.bin', x)
    const cidZ = await store('/z.bin', z)
    await seal()
    await tree.remove('/x.bin')
    await tree.remove('/z.bin')
    await liveness.mark(1_000)
    expect(await liveness.retire(1, 2_000)).toBe(true)
    // x.bin back: its blocks, z.bin's among them, go into group 2; then z.bin back, every block of it found there.
    await store('/x.bin', x)
    expect(await store('/z.bin', z)).toBe(cidZ)
    expect(await groupsOf(cidZ)).toEqual([2])
    await seal()
    await tree.remove('/x.bin')
    expect((await liveness.mark(3_000)).died).toEqual([])
  })
})

/**
 * Folder summaries follow the tree as it changes and cost a record the same
 * whatever the folder holds: after a change deep down, only the folders on
 * its path are read again (their direct children), never everything below;
 * a record of an unchanged folder reads nothing and writes nothing. The CIDs
 * are the ones the full computation (folder-cid.ts `folderDag`, checked
 * against kubo there) gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSql } from '../../server/shared/sql/index.ts'
import { createNamespace, type Namespace } from '../../server/gateway/namespace.ts'
import { createFolderIndex, type FolderIndex } from '../../server/gateway/folder-index.ts'
import { folderDag } from '../../server/gateway/folder-cid.ts'
import { chunksOf, makeStore, type TestStore } from './content/helpers.ts'

let t: TestStore
let raw: Namespace
let ns: Namespace
let index: FolderIndex
const calls = { children: 0, descendants: 0, stored: 0 }

beforeAll(async () => {
  t = await makeStore()
  raw = await createNamespace(await openSql({ file: ':memory:', schema: 'gateway' }))
  // The namespace and the content store as the index sees them, counting what it asks.
  const counted: Namespace = {
    ...raw,
    instanceId: raw.instanceId,
    get: raw.get,
    putFile: raw.putFile,
    makeDir: raw.makeDir,
    remove: raw.remove,
    copy: raw.copy,
    move: raw.move,
    setModified: raw.setModified,
    folderSize: raw.folderSize,
    transaction: raw.transaction,
    within: raw.within,
    children: (p) => (calls.children++, raw.children(p)),
    descendants: (p) => (calls.descendants++, raw.descendants(p)),
  }
  const content = {
    ...t.store,
    storeDirectory: (root: Parameters<TestStore['store']['storeDirectory']>[0]) => (calls.stored++, t.store.storeDirectory(root)),
  }
  index = createFolderIndex({ namespace: counted, content })
  ns = index.tracking(raw)
})
afterAll(async () => {
  await index?.close()
  await t?.cleanup()
})

const reset = () => Object.assign(calls, { children: 0, descendants: 0, stored: 0 })
const expectedCid = async (path: string) => (await folderDag(await raw.descendants(path), path)).cid
const put = async (path: string, text: string) => ns.putFile(path, await t.store.ingest(chunksOf(Buffer.from(text))))

describe('folder summaries', () => {
  it('give the CID the full computation gives, after every kind of change deep down', async () => {
    await ns.makeDir('/a')
    await ns.makeDir('/a/b')
    await ns.makeDir('/a/b/c')
    await put('/a/b/c/one.txt', 'one')
    await put('/top.txt', 'top')
    expect((await index.summary('/')).cid).toBe(await expectedCid('/'))
    await put('/a/b/c/two.txt', 'two')
    expect((await index.summary('/')).cid).toBe(await expectedCid('/'))
    expect((await index.summary('/a/b')).cid).toBe(await expectedCid('/a/b'))
    await ns.move('/a/b/c/one.txt', '/a/one.txt')
    expect((await index.summary('/a/b/c')).cid).toBe(await expectedCid('/a/b/c'))
    expect((await index.summary('/')).cid).toBe(await expectedCid('/'))
    await ns.copy('/a/b', '/b-copy', true)
    expect((await index.summary('/')).cid).toBe(await expectedCid('/'))
    await ns.remove('/a/b')
    expect((await index.summary('/a')).cid).toBe(await expectedCid('/a'))
    expect((await index.summary('/')).cid).toBe(await expectedCid('/'))
    // Changes inside a transaction count too, once committed.
    const inTx = await t.store.ingest(chunksOf(Buffer.from('tx')))
    await ns.transaction(async (tx) => ns.within(tx).putFile('/a/in-tx.txt', inTx))
    expect((await index.summary('/')).cid).toBe(await expectedCid('/'))
  })

  it('counts the files below by the groups holding them', async () => {
    const s = await index.summary('/')
    const files = (await raw.descendants('/')).filter((e) => e.kind === 'file').length
    expect([...s.filesByGroups.values()].reduce((a, b) => a + b, 0)).toBe(files)
    expect([...s.filesByGroups.keys()].every((k) => /^\d+(,\d+)*$/.test(k))).toBe(true)
  })

  it("reads only the folders on a change's path, however big the tree, and nothing for an unchanged one", async () => {
    await ns.makeDir('/big')
    await ns.makeDir('/big/deep')
    const one = await t.store.ingest(chunksOf(Buffer.from('same bytes')))
    for (let i = 0; i < 2_000; i++) await raw.putFile(`/big/f-${i}.txt`, one)
    index.changed(['/big'])
    await index.summary('/')
    reset()
    // Unchanged: a record costs no read of the tree, and writes nothing.
    for (let i = 0; i < 20; i++) await index.summary('/big')
    await index.summary('/')
    expect(calls).toEqual({ children: 0, descendants: 0, stored: 0 })
    // A file put deep down: its three folders are read again (their direct children), not the 2 000 files' folder's walk.
    await put('/big/deep/new.txt', 'new')
    await index.summary('/')
    expect(calls.descendants).toBe(0)
    expect(calls.children).toBe(3)
    expect((await index.summary('/big')).cid).toBe(await expectedCid('/big'))
  })

  it("stores a folder's directory nodes once per version, when a record names its CID", async () => {
    reset()
    await put('/a/later.txt', 'later')
    const groups = await index.storedGroups('/')
    expect(calls.stored).toBeGreaterThan(0)
    expect(groups.size).toBeGreaterThan(0)
    expect(await t.store.has((await index.summary('/')).cid)).toBe(true)
    expect(await t.store.has((await index.summary('/a')).cid)).toBe(true)
    reset()
    expect(await index.storedGroups('/')).toEqual(groups)
    expect(calls).toEqual({ children: 0, descendants: 0, stored: 0 })
  })
})

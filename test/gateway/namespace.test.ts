import { afterEach, beforeEach, expect, it } from 'vitest'
import { createNamespace, type Namespace } from '../../server/gateway/namespace.ts'
import type { Sql } from '../../server/shared/sql/index.ts'
import { describeEachStore } from '../helpers/stores.ts'

const file = (cid: string, size: number) => ({ cid, size, dagSize: size })

describeEachStore('gateway namespace', ({ open }) => {
  let sql: Sql
  let ns: Namespace
  beforeEach(async () => {
    sql = await open('gateway')
    ns = await createNamespace(sql)
  })
  afterEach(() => sql.close())

  it('moves a folder with everything below, names in any script, keeping ids and etags, and bumps the etags above', async () => {
    await ns.makeDir('/a')
    await ns.makeDir('/a/🌍 photos')
    await ns.putFile('/a/🌍 photos/été.jpg', file('bafy-1', 10))
    await ns.putFile('/a/🌍 photos/z.txt', file('bafy-2', 5))
    await ns.makeDir('/b')
    const before = (await ns.get('/a/🌍 photos/été.jpg'))!
    const rootEtag = (await ns.get('/'))!.etag
    await ns.move('/a/🌍 photos', '/b/📷')
    expect(await ns.get('/a/🌍 photos')).toBeUndefined()
    expect((await ns.children('/b/📷')).map((e) => e.path)).toEqual(['/b/📷/z.txt', '/b/📷/été.jpg']) // byte order, as SQLite and COLLATE "C" sort
    expect(await ns.get('/b/📷/été.jpg')).toMatchObject({ fileId: before.fileId, etag: before.etag, cid: 'bafy-1' })
    expect((await ns.get('/'))!.etag).not.toBe(rootEtag)
    expect(await ns.folderSize('/b')).toBe(15)
    expect(await ns.folderSize('/a')).toBe(0)
  })

  it('copies with new ids, removes a tree, and lists below a folder only what is below it', async () => {
    await ns.makeDir('/docs')
    await ns.putFile('/docs/a', file('bafy-a', 1))
    await ns.makeDir('/docs-old')
    await ns.putFile('/docs-old/x', file('bafy-x', 1))
    await ns.copy('/docs', '/copy')
    const [orig, copy] = [(await ns.get('/docs/a'))!, (await ns.get('/copy/a'))!]
    expect(copy.cid).toBe(orig.cid)
    expect(copy.fileId).not.toBe(orig.fileId)
    // '/docs-old' sorts between '/docs/' and '/docs0': it is not below '/docs'.
    expect((await ns.descendants('/docs')).map((e) => e.path)).toEqual(['/docs/a'])
    await ns.remove('/docs')
    expect(await ns.get('/docs/a')).toBeUndefined()
    expect(await ns.get('/docs-old/x')).toBeDefined()
  })

  it('lets exactly one of two racing creations of one path happen inside transactions', async () => {
    const create = () =>
      ns.transaction(async (tx) => {
        const inTx = ns.within(tx)
        if (await inTx.get('/race')) return false
        await inTx.makeDir('/race')
        return true
      })
    const results = await Promise.all([create(), create(), create()])
    expect(results.filter(Boolean)).toHaveLength(1)
  })
})

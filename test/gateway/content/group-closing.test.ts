/**
 * A group that holds only folders' directory nodes (the listings a delete,
 * rename or upload rewrites) is not closed by the idle timer: sealed alone it
 * would be stored and paid for once per change. It closes when a file's data
 * joins it (then the idle rule applies), when it is full, or LISTING_WAIT
 * after it opened, counted across restarts; sealing by hand still seals it.
 */
import { randomBytes } from 'node:crypto'
import { afterEach, expect, it } from 'vitest'
import { directoryDag } from '../../../server/gateway/folder-cid.ts'
import { describeEachStore } from '../../helpers/stores.ts'
import { chunksOf, makeStore as makeStoreAt, type TestStore } from './helpers.ts'

let t: TestStore | undefined
afterEach(async () => {
  await t?.cleanup()
  t = undefined
})

/** A folder's listing naming one file, as the folder runs store it. */
async function listing(name: string) {
  const dag = await directoryDag([{ name, cid: 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku', dagSize: 1 }])
  return { cid: dag.cid, dagSize: dag.dagSize, nodes: dag.nodes }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))
const waitFor = async (check: () => Promise<boolean>) => {
  // Outcome polling, not a timing assertion: give up after a generous bound.
  for (let i = 0; i < 2000 && !(await check()); i++) await pause(5)
  expect(await check()).toBe(true)
}
const states = async (s: TestStore) => (await s.store.groups()).map((g) => g.state)

describeEachStore('closing a group of folder listings', ({ location }) => {
  const makeStore = (o: Parameters<typeof makeStoreAt>[0] = {}) => makeStoreAt({ ...o, where: location() })

  it('leaves a group of listings open past the idle time, however many come; a file joining it closes it when idle', async () => {
    t = await makeStore({ groupIdleMs: 20 })
    for (const name of ['a.txt', 'b.txt', 'c.txt']) {
      await t.store.storeDirectory(await listing(name))
      await pause(100)
    }
    expect(await states(t)).toEqual(['writable'])
    expect((await t.store.groups())[0].listingsOnly).toBe(true)

    const file = await t.store.ingest(chunksOf(randomBytes(1000)))
    await waitFor(async () => (await states(t!)).every((s) => s === 'ready_for_deals'))
    // The listings went with the file: one group, sealed.
    expect((await t.store.groupsOf(file.cid)).map((g) => g.id)).toEqual([(await t.store.groupsOf((await listing('a.txt')).cid))[0].id])
    expect(await states(t)).toEqual(['ready_for_deals'])
  })

  it('seals a group of listings once LISTING_WAIT has passed since it opened', async () => {
    t = await makeStore({ groupIdleMs: 20, listingWaitMs: 400 })
    const opened = Date.now()
    await t.store.storeDirectory(await listing('a.txt'))
    await pause(150)
    expect(await states(t)).toEqual(['writable'])
    await waitFor(async () => (await states(t!))[0] === 'ready_for_deals')
    expect(Date.now() - opened).toBeGreaterThanOrEqual(400)
    expect((await t.store.groups())[0].pieceCid).toMatch(/^baga6ea4seaq/)
  })

  it('still seals a group of listings by hand (sealWritable)', async () => {
    t = await makeStore({ groupIdleMs: 20 })
    await t.store.storeDirectory(await listing('a.txt'))
    await t.store.sealWritable()
    await t.store.settled()
    expect(await states(t)).toEqual(['ready_for_deals'])
  })

  it('keeps a group of listings open across a restart, its wait counted from when it opened', async () => {
    t = await makeStore({ groupIdleMs: 20 })
    await t.store.storeDirectory(await listing('a.txt'))
    const [opened] = await t.store.groups()
    await t.reopen({ groupIdleMs: 20 })
    await pause(200)
    expect(await states(t)).toEqual(['writable'])

    // A shorter wait, already over since the group opened: it closes at the first idle check, not a wait later.
    const waitMs = Date.now() - opened.createdMs + 1
    await t.reopen({ groupIdleMs: 20, listingWaitMs: waitMs })
    await waitFor(async () => (await states(t!))[0] === 'ready_for_deals')
  })

  it('leaves a stale group of listings a restart finds (an interrupted roll-over) open until its wait is over', async () => {
    t = await makeStore({ groupIdleMs: 20 })
    await t.store.storeDirectory(await listing('a.txt'))
    const file = await t.store.ingest(chunksOf(randomBytes(1000)))
    await t.store.sealWritable()
    await t.store.settled()
    // Listings in a new group, then a second writable group as a roll-over cut short would leave.
    await t.store.storeDirectory(await listing('b.txt'))
    await t.sql.run(`INSERT INTO content_groups (state, created_ms, updated_ms, holds_files) VALUES ('writable', ?, ?, 0)`, [
      Date.now(),
      Date.now(),
    ])
    await t.reopen({ groupIdleMs: 20, listingWaitMs: 60_000 })
    await pause(200)
    expect(await states(t)).toEqual(['ready_for_deals', 'writable', 'writable'])
    expect((await t.store.groupsOf(file.cid))[0].state).toBe('ready_for_deals')

    await t.reopen({ groupIdleMs: 20, listingWaitMs: 300 })
    await waitFor(async () => (await states(t!))[1] === 'ready_for_deals')
  })
})

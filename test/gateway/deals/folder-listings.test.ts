/**
 * A delete (a rename, an upload) rewrites the listings of the folders above
 * it, whose CIDs the gateway reports and must be able to fetch back from
 * providers. They are batched rather than stored alone: a group holding only
 * listings waits for the next file's data, or LISTING_WAIT_SECONDS, instead of
 * being sealed when idle and paid for on both routes (a market deal, a PDP add)
 * once per delete.
 */
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { blockMatchesCid } from '../../../server/gateway/content/verify-block.ts'
import type { GroupRecord } from '../../../server/gateway/content/index.ts'
import { startDealStack, type DealStack } from './harness.ts'

let stack: DealStack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))
/** GROUP_IDLE_SECONDS of these stacks: a group with a file's data closes this long after its last write. */
const IDLE_SECONDS = 0.3
/** Market deals and PDP copies: one each a group. */
const ROUTES = { copies: 1, foc: { copies: 1 }, groupIdleSeconds: IDLE_SECONDS }
const TICKS = { max: 900, pauseMs: 100, epochsPerTick: 10 }

const sealed = (g: GroupRecord) => g.state !== 'writable'
/** Copies begun on each route, the groups they are of: every one paid for (a deal, a PDP add). */
async function copies(s: DealStack) {
  const groups = await s.gateway.content.groups()
  const of = (pdp: boolean) => groups.filter((g) => g.deals.some((d) => (d.route === 'pdp') === pdp) || (g.failedDeals?.length ?? 0) > 0)
  return { market: of(false).map((g) => g.id), pdp: of(true).map((g) => g.id), sealed: groups.filter(sealed).map((g) => g.id) }
}
/** Whether every sealed group has an active copy on both routes. */
async function allStored(s: DealStack): Promise<boolean> {
  const groups = (await s.gateway.content.groups()).filter(sealed)
  const active = (g: GroupRecord, pdp: boolean) => g.deals.some((d) => (d.route === 'pdp') === pdp && d.state === 'active')
  return groups.length > 0 && groups.every((g) => active(g, true) && active(g, false))
}
const remove = async (s: DealStack, path: string) =>
  expect((await fetch(`${s.gatewayServer.url}${path}`, { method: 'DELETE' })).status).toBe(204)
/** The folder's listings as the background run stores them after a change (now, rather than a second later). */
const listingsStored = (s: DealStack) => s.gateway.folders.settled()
const folderCid = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.cid as string

/**
 * Once the block's groups are offloaded (their copies checked retrievable), fetches it from a provider of their
 * market deals, as a trustless gateway serves it (the provider's own index names the piece, padded or not).
 */
async function fromProviders(s: DealStack, cid: string): Promise<Uint8Array | undefined> {
  const groups = async () => s.gateway.content.groupsOf(cid)
  expect(await s.runUntil(async () => (await groups()).every((g) => g.state === 'offloaded'), TICKS)).toBe(true)
  for (const d of (await groups()).flatMap((g) => g.deals.filter((x) => x.route !== 'pdp' && x.state === 'active'))) {
    const piece = await s.sim.pieceOfBlock(d.provider, cid)
    const bytes = piece && (await s.sim.retrieveBlock(d.provider, piece, cid).catch(() => undefined))
    if (bytes && (await blockMatchesCid(cid, bytes))) return bytes
  }
  return undefined
}

/** Uploads four files into /proj and takes their group (with the folders' listings) to a copy on both routes. */
async function storedFolder(s: DealStack): Promise<void> {
  expect((await fetch(`${s.gatewayServer.url}/proj`, { method: 'MKCOL' })).status).toBe(201)
  for (const name of ['a.bin', 'b.bin', 'c.bin', 'd.bin']) expect((await s.put(`/proj/${name}`, randomBytes(40_000))).status).toBe(201)
  await listingsStored(s)
  await pause(IDLE_SECONDS * 1000 + 300)
  await s.gateway.content.settled()
  expect(await s.runUntil(() => allStored(s), TICKS)).toBe(true)
}

describe("folders' listings after a delete", () => {
  it('pays for no group per delete: the listings wait, then go with the next upload, and the folder CID is fetched back', async () => {
    const s = (stack = await startDealStack({ seed: 'listings batched', ...ROUTES }))
    await storedFolder(s)
    const before = await copies(s)
    expect(before.sealed).toHaveLength(1)

    for (const name of ['a.bin', 'b.bin', 'c.bin']) {
      await remove(s, `/proj/${name}`)
      await listingsStored(s)
      // Well past GROUP_IDLE_SECONDS, the engine running: no group sealed for it, no deal, no PDP add.
      await pause(IDLE_SECONDS * 1000 * 3)
      await s.runUntil(() => false, { max: 5, pauseMs: 20 })
      expect(await copies(s)).toEqual(before)
    }
    const waiting = (await s.gateway.content.groups()).filter((g) => !sealed(g))
    expect(waiting.map((g) => [g.state, g.listingsOnly])).toEqual([['writable', true]])

    // The next upload takes the waiting listings with it, into one group stored on both routes.
    expect((await s.put('/proj/e.bin', randomBytes(40_000))).status).toBe(201)
    await listingsStored(s)
    await pause(IDLE_SECONDS * 1000 + 300)
    await s.gateway.content.settled()
    expect(await s.runUntil(() => allStored(s), TICKS)).toBe(true)
    const after = await copies(s)
    expect(after.sealed).toEqual([...before.sealed, waiting[0].id])
    expect(after.pdp).toEqual(after.sealed)
    expect(after.market).toEqual(after.sealed)

    const reported = await folderCid(s, '/proj')
    expect((await s.gateway.content.groupsOf(reported)).map((g) => g.id)).toEqual([waiting[0].id])
    expect(await fromProviders(s, reported)).toBeDefined()
  }, 300_000)

  it('stores a group of listings alone on both routes once LISTING_WAIT_SECONDS has passed', async () => {
    const s = (stack = await startDealStack({ seed: 'listings wait', ...ROUTES, listingWaitSeconds: 2 }))
    await storedFolder(s)
    const before = await copies(s)

    await remove(s, '/proj/a.bin')
    await listingsStored(s)
    const reported = await folderCid(s, '/proj')
    const [listing] = await s.gateway.content.groupsOf(reported)
    expect(listing.state).toBe('writable')
    for (let i = 0; i < 100 && !sealed((await s.gateway.content.group(listing.id))!); i++) await pause(100)
    await s.gateway.content.settled()
    expect(Date.now() - listing.createdMs).toBeGreaterThanOrEqual(2000)
    expect(await s.runUntil(() => allStored(s), TICKS)).toBe(true)
    const after = await copies(s)
    expect(after.sealed).toEqual([...before.sealed, listing.id])
    expect(after.pdp).toEqual(after.sealed)
    expect(await fromProviders(s, reported)).toBeDefined()
  }, 300_000)
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import type { ContentStore, GroupRecord } from '../../../server/gateway/content/index.ts'
import {
  createDealEngine,
  createDealStore,
  createRouteContext,
  type DealStore,
  type StorageRoute,
} from '../../../server/gateway/deals/index.ts'
import type { GroupDeal, RouteName } from '../../../server/gateway/deals/types.ts'
import { openSql, type Sql } from '../../../server/shared/sql/index.ts'

/**
 * The deal engine over two routes on two chains: a deal market whose Lotus
 * chain is at epoch 5 000 000 and an Onchain Cloud whose FEVM chain is at
 * epoch 2 000 (another genesis, another clock). Each route's copies are
 * judged at its own chain's head, read once a pass; the routes are fakes
 * that record what they are given, over a real deal store.
 */
describe("the deal engine judges each route's copies at its own chain's head", () => {
  let dir: string | undefined
  let sql: Sql | undefined
  afterEach(async () => {
    await sql?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
    dir = sql = undefined
  })

  /** A route that keeps one copy a group, lasting while its end epoch is more than 100 epochs past its chain's head. */
  function fakeRoute(name: RouteName, head: { epoch: number; down?: boolean }) {
    const seen = { heads: 0, follow: [] as number[], place: [] as number[] }
    const route: StorageRoute = {
      name,
      warm: name === 'pdp',
      required: () => 1,
      async chainHead() {
        seen.heads++
        if (head.down) throw new Error(`${name} chain unreachable`)
        return head.epoch
      },
      lasting: (d: GroupDeal, at: number) => d.endEpoch - at > 100,
      async follow(at) {
        seen.follow.push(at)
      },
      async place(at) {
        seen.place.push(at)
        return true
      },
      transferPending: () => false,
      retire: async () => ({ ended: 0, toTerm: 0 }),
      progress: () => ({ underWay: false, steps: [] }),
      standing: () => ({}),
      retrieveBlock: async () => new Uint8Array(),
      retrievePiece: () => ({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true as const, value: undefined }) }) }),
      stop: async () => {},
    }
    return { route, seen }
  }

  /** An active, retrievable copy of group 1 on `route` ending at `endEpoch` of that route's chain. */
  async function activeCopy(deals: DealStore, route: RouteName, endEpoch: number): Promise<void> {
    const d = await deals.create({
      groupId: 1,
      route,
      provider: `${route}-1`,
      pieceCid: 'baga6ea4seaqpiece',
      startEpoch: 0,
      endEpoch,
      proposalEpoch: 0,
    })
    await deals.markProposed(d.id, route === 'pdp' ? { addTxHash: '0x01' } : { proposalId: 'uuid-1' })
    await deals.markPublished(d.id, route === 'pdp' ? { dataSetId: 7 } : { dealId: 42 })
    await deals.markActive(d.id)
    await deals.recordCheck(d.id, 'passed')
  }

  async function engineOver(routes: StorageRoute[]) {
    dir = mkdtempSync(join(tmpdir(), 'route-heads-'))
    sql = await openSql({ file: join(dir, 'gateway.sqlite'), schema: 'gateway' })
    const deals = await createDealStore(sql)
    const group: GroupRecord = {
      id: 1,
      state: 'ready_for_deals',
      size: 200,
      pieceCid: 'baga6ea4seaqpiece',
      pieceSize: 256,
      carSize: 200,
      retrievableCopies: 0,
      deals: [],
      createdMs: 0,
      updatedMs: 0,
    }
    const content = {
      groups: async () => [group],
      // No block to check: the copies stay as set up.
      sampleBlock: async () => undefined,
      async offload() {
        group.state = 'offloaded'
        return true
      },
    } as unknown as ContentStore
    const logs: { level: number; msg: string; route?: string }[] = []
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk, _encoding, done) {
          logs.push(JSON.parse(String(chunk)))
          done()
        },
      }),
    )
    const engine = createDealEngine({
      context: createRouteContext({ deals, content, logger, callTimeoutMs: 1_000, retryAfterEpochs: 120 }),
      routes,
      retrievalCheckMs: 3_600_000,
      callTimeoutMs: 1_000,
      reloadTimeoutMs: 1_000,
      repairHoldEpochs: 8_640,
    })
    return { engine, deals, group, logs }
  }

  it('gives each route the head of its own chain, read once a pass, and offloads a group whose copies last each on its own chain', async () => {
    const market = fakeRoute('market', { epoch: 5_000_000 })
    const pdp = fakeRoute('pdp', { epoch: 2_000 })
    const { engine, deals, group } = await engineOver([market.route, pdp.route])
    // Each copy lasts at its own chain's head only: the market deal ends at 5 000 500, the PDP copy at 3 000.
    await activeCopy(deals, 'market', 5_000_500)
    await activeCopy(deals, 'pdp', 3_000)
    await engine.tick()
    expect(market.seen).toEqual({ heads: 1, follow: [5_000_000], place: [5_000_000] })
    expect(pdp.seen).toEqual({ heads: 1, follow: [2_000], place: [2_000] })
    expect(group.state).toBe('offloaded')
  })

  it("counts a copy about to end on its own chain as ending, whatever the other chain's head", async () => {
    const market = fakeRoute('market', { epoch: 5_000_000 })
    // The FEVM chain is at 2 950: its copy ending at 3 000 is within 100 epochs of its end, and no longer lasts.
    const pdp = fakeRoute('pdp', { epoch: 2_950 })
    const { engine, deals, group } = await engineOver([market.route, pdp.route])
    await activeCopy(deals, 'market', 5_000_500)
    await activeCopy(deals, 'pdp', 3_000)
    await engine.tick()
    expect(group.state).toBe('ready_for_deals')
  })

  it('goes on with the routes whose chain answers when one does not, offloading nothing until every chain is read', async () => {
    const market = fakeRoute('market', { epoch: 5_000_000 })
    const fevm = { epoch: 2_000, down: true }
    const pdp = fakeRoute('pdp', fevm)
    const { engine, deals, group, logs } = await engineOver([market.route, pdp.route])
    await activeCopy(deals, 'market', 5_000_500)
    await activeCopy(deals, 'pdp', 3_000)
    await engine.tick()
    await engine.tick()
    expect(market.seen.follow).toEqual([5_000_000, 5_000_000])
    expect(pdp.seen).toEqual({ heads: 2, follow: [], place: [] })
    // Its copies cannot be judged without its head: the group stays until the chain answers.
    expect(group.state).toBe('ready_for_deals')
    const said = logs.filter((l) => /chain head/.test(l.msg))
    expect(said).toEqual([expect.objectContaining({ level: 40, route: 'pdp' })])
    fevm.down = false
    await engine.tick()
    expect(pdp.seen.follow).toEqual([2_000])
    expect(group.state).toBe('offloaded')
    expect(logs.filter((l) => /chain head is read again/.test(l.msg))).toHaveLength(1)
  })
})

import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import type { ContentStore, GroupRecord } from '../../../server/gateway/content/index.ts'
import type { GroupCopies } from '../../../server/gateway/deals/copies.ts'
import { emptyReport } from '../../../server/gateway/deals/deal-engine.ts'
import { createRepairs } from '../../../server/gateway/deals/repair.ts'
import type { StorageRoute } from '../../../server/gateway/deals/route.ts'

/** A promise and the hands that settle it. */
function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

/**
 * Where a repair stands as the engine tells it for the group's reason: one offloaded group short of copies,
 * its reload and its release each held open by the test, its copies back when the test says.
 */
/** The heads of one pass, the PDP route's chain at `epoch`. */
const at = (epoch: number) => new Map([['pdp', epoch]])

describe("a repair's phases", () => {
  it('reloading, held while its copies are made, releasing once they are back, then none', async () => {
    const group = { id: 7, state: 'offloaded' } as GroupRecord
    const reload = deferred<() => Promise<void>>()
    const released = deferred()
    let releasing = false
    const content = { groups: async () => [group], holdForDeals: () => reload.promise } as unknown as ContentStore
    let back = false
    const copies: GroupCopies = {
      short: async () => !back,
      satisfied: async () => back,
      transferPending: async () => false,
      retrievable: async () => 2,
      counts: async () => ({ pdp: back ? '2 of 2' : '1 of 2' }),
    }
    const repairs = createRepairs({
      content,
      logger: pino({ level: 'silent' }),
      copies,
      retryAfterEpochs: 120,
      repairHoldEpochs: 8640,
      timedBy: { name: 'pdp' },
    })
    const r = emptyReport()

    expect(repairs.phase(7)).toBeUndefined()
    await repairs.start(at(100), r, [{ name: 'pdp' } as StorageRoute])
    expect(repairs.phase(7)).toEqual({ phase: 'reloading' })

    reload.resolve(async () => {
      releasing = true
      await released.promise
    })
    await new Promise((r) => setImmediate(r))
    expect(repairs.phase(7)).toEqual({ phase: 'held' })
    expect(repairs.holds(7)).toBe(true)
    await repairs.finish(at(110), r)
    expect(repairs.phase(7)).toEqual({ phase: 'held' })

    back = true
    const finishing = repairs.finish(at(120), r)
    await new Promise((r) => setImmediate(r))
    expect(releasing).toBe(true)
    expect(repairs.phase(7)).toEqual({ phase: 'releasing', why: 'repaired' })
    // Not sent again while its bytes go.
    expect(repairs.holds(7)).toBe(false)
    released.resolve()
    await finishing
    expect(repairs.phase(7)).toBeUndefined()
    expect(r.repaired).toBe(1)
  })

  it('releasing when held too long without its copies, then none until it is reloaded again', async () => {
    const group = { id: 7, state: 'offloaded' } as GroupRecord
    const released = deferred()
    const content = {
      groups: async () => [group],
      holdForDeals: async () => () => released.promise,
    } as unknown as ContentStore
    const copies: GroupCopies = {
      short: async () => true,
      satisfied: async () => false,
      transferPending: async () => false,
      retrievable: async () => 1,
      counts: async () => ({ pdp: '1 of 2' }),
    }
    const repairs = createRepairs({
      content,
      logger: pino({ level: 'silent' }),
      copies,
      retryAfterEpochs: 120,
      repairHoldEpochs: 50,
      timedBy: { name: 'pdp' },
    })
    const r = emptyReport()
    await repairs.start(at(100), r, [{ name: 'pdp' } as StorageRoute])
    await new Promise((r) => setImmediate(r))
    expect(repairs.phase(7)).toEqual({ phase: 'held' })
    const finishing = repairs.finish(at(150), r)
    await new Promise((r) => setImmediate(r))
    expect(repairs.phase(7)).toEqual({ phase: 'releasing', why: 'given-up' })
    released.resolve()
    await finishing
    expect(repairs.phase(7)).toBeUndefined()
    expect(r.repairsGivenUp).toBe(1)
  })
})

/**
 * One user's folder-states requests are worked on a few at a time: the rest
 * wait their turn in order, past the queue they get a 429 with Retry-After,
 * and another user's requests never wait behind them.
 */
import { describe, expect, it } from 'vitest'
import { BridgeError } from '../../server/bridge/errors.ts'
import { createPerUserLimit } from '../../server/bridge/folder-states-cache.ts'

function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

describe('per-user limit on folder-states work', () => {
  it('runs 2 of one user at once, queues 2 more in order, refuses the next with 429, and lets another user through', async () => {
    const limited = createPerUserLimit({ running: 2, waiting: 2 })
    const started: string[] = []
    const gates = new Map<string, ReturnType<typeof gate>>()
    const job = (user: string, name: string) =>
      limited(user, async () => {
        started.push(name)
        const g = gate()
        gates.set(name, g)
        await g.opened
        return name
      })
    const running = [job('alice', 'a1'), job('alice', 'a2'), job('alice', 'a3'), job('alice', 'a4')]
    const refused = await job('alice', 'a5').catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(BridgeError)
    expect(refused).toMatchObject({ status: 429, headers: { 'Retry-After': '1' } })
    const bob = job('bob', 'b1')
    await new Promise((resolve) => setImmediate(resolve))
    expect(started).toEqual(['a1', 'a2', 'b1'])
    gates.get('b1')!.open()
    expect(await bob).toBe('b1')
    gates.get('a2')!.open()
    await running[1]
    await new Promise((resolve) => setImmediate(resolve))
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3'])
    for (const name of ['a1', 'a3']) gates.get(name)!.open()
    await new Promise((resolve) => setImmediate(resolve))
    gates.get('a4')!.open()
    expect(await Promise.all(running)).toEqual(['a1', 'a2', 'a3', 'a4'])
    // Nothing is left held: alice gets her two places again.
    expect(await limited('alice', async () => 'again')).toBe('again')
  })
})

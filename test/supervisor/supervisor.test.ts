import { join } from 'node:path'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { createSupervisor, type PartReady, type Supervisor } from '../../server/supervisor.ts'

const entry = join(import.meta.dirname, 'fake-part.ts')
const logger = pino({ level: 'silent' })
const portOf = (ready: ReadonlyMap<string, PartReady>, name: string) => (ready.get(name) ? new URL(ready.get(name)!.url).port : '0')

async function waitFor<T>(probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    const v = await probe().catch(() => undefined)
    if (v !== undefined) return v
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('timed out')
}

describe('supervisor', () => {
  let sup: Supervisor | undefined
  afterEach(async () => {
    await sup?.stop()
    sup = undefined
  })

  it('starts parts in order, tells each where the earlier ones listen, merges their logs, and restarts one that dies on its own port', async () => {
    const lines: string[] = []
    sup = createSupervisor({
      entry,
      logger,
      output: (line) => lines.push(line),
      restart: { firstMs: 50, maxMs: 200, stableMs: 60_000 },
      parts: [
        // A restarted part keeps its port, so the parts after it still reach it.
        { name: 'a', args: ['a'], env: (ready) => ({ PORT: portOf(ready, 'a') }) },
        { name: 'b', args: ['b'], env: (ready) => ({ PORT: portOf(ready, 'b'), PEER_URL: ready.get('a')!.url }) },
      ],
    })
    const ready = await sup.start()
    const a = ready.get('a')!.url
    const b = ready.get('b')!.url
    expect(await (await fetch(b)).json()).toMatchObject({ name: 'b', peer: a })
    expect(lines.map((l) => JSON.parse(l).part)).toEqual(['a', 'b'])

    const firstPid = sup.child('a')!.pid
    sup.child('a')!.kill('SIGKILL')
    // b never stops answering while a is down and back.
    expect((await fetch(b)).status).toBe(200)
    const back = await waitFor(async () => {
      const body = (await (await fetch(a)).json()) as { pid: number }
      return body.pid !== firstPid ? body : undefined
    })
    expect(back).toMatchObject({ name: 'a' })
    expect(lines.filter((l) => JSON.parse(l).part === 'a').length).toBe(2)
  })

  it('stops the parts in reverse order and resolves once all have exited', async () => {
    sup = createSupervisor({
      entry,
      logger,
      output: () => {},
      parts: [
        { name: 'a', args: ['a'], env: () => ({}) },
        { name: 'b', args: ['b'], env: () => ({}) },
      ],
    })
    await sup.start()
    const children = [sup.child('a')!, sup.child('b')!]
    const exits: string[] = []
    children.forEach((c, i) => c.once('exit', () => exits.push(i === 0 ? 'a' : 'b')))
    await sup.stop()
    expect(exits).toEqual(['b', 'a'])
    expect(children.every((c) => c.exitCode === 0)).toBe(true)
  })

  it("passes on every line a part writes as it stops, also when the process group's SIGTERM stopped it first", async () => {
    const lines: string[] = []
    sup = createSupervisor({
      entry,
      logger,
      // Passing a line on takes a moment (pretty-printing on a busy machine): the parts write faster than that.
      output: (line) => {
        const until = performance.now() + 0.1
        while (performance.now() < until);
        lines.push(line)
      },
      parts: [
        { name: 'a', args: ['a'], env: () => ({ FAKE_STOP_LINES: '2000' }) },
        { name: 'b', args: ['b'], env: () => ({ FAKE_STOP_LINES: '2000' }) },
      ],
    })
    await sup.start()
    // The group's signal reaches the parts as it reaches the supervisor; one has exited before the supervisor stops it.
    const a = sup.child('a')!
    a.kill('SIGTERM')
    sup.child('b')!.kill('SIGTERM')
    await new Promise((resolve) => a.once('exit', resolve))
    await sup.stop()
    for (const part of ['a', 'b']) {
      const said = lines.map((l) => JSON.parse(l)).filter((l) => l.part === part)
      expect(
        said.filter((l) => l.msg === 'closing'),
        part,
      ).toHaveLength(2000)
      expect(said.at(-1), part).toMatchObject({ msg: 'stopped' })
    }
  })
})

/**
 * The simulated network's seeded faults: the same seed strikes the same
 * events, the rate is about what was asked, stalls are bounded, and each
 * place they are applied (chain JSON-RPC, CAR downloads) shows them as a
 * peer would see them.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import {
  CHAIN_FAILURES,
  createFaults,
  FAULT_SITES,
  faultyFetch,
  type ChainFailure,
  type FaultSite,
} from '../../server/simulation/simnet/faults.ts'
import { createSimnet } from '../../server/simulation/simnet/index.ts'
import { curioTransfer } from '../../server/simulation/simnet/provider-transfer.ts'
import { SIMNET_RPC_PATH, simnetRpcListener } from '../../server/simulation/simnet/rpc-server.ts'
import { startServer } from '../../server/shared/http.ts'

const sequence = (seed: string, rate: number, site: FaultSite, n: number) => {
  const plan = createFaults({ seed, rate })
  return Array.from({ length: n }, (_, i) => plan.draw(site, `call ${i}`))
}

describe('fault plan', () => {
  it('strikes the same events with the same seed, and others with another seed', () => {
    for (const site of FAULT_SITES) {
      const a = sequence('seed-a', 0.1, site, 500)
      expect(sequence('seed-a', 0.1, site, 500)).toEqual(a)
      expect(sequence('seed-b', 0.1, site, 500)).not.toEqual(a)
      expect(a.some((f) => f?.kind === 'fail')).toBe(true)
      expect(a.some((f) => f?.kind === 'stall')).toBe(true)
    }
  })

  it('keeps each site its own sequence: draws at one site do not shift another', () => {
    const alone = sequence('s', 0.1, 'transfer', 200)
    const plan = createFaults({ seed: 's', rate: 0.1 })
    const mixed = Array.from({ length: 200 }, () => (plan.draw('chain'), plan.draw('stream'), plan.draw('transfer')))
    expect(mixed).toEqual(alone)
  })

  it('strikes about the rate asked, half failures and half stalls, and counts them', () => {
    const plan = createFaults({ seed: 'rate', rate: 0.05 })
    for (let i = 0; i < 20_000; i++) plan.draw('chain')
    const { fail, stall } = plan.counts().chain
    // 5 % of 20 000 = 1000; a binomial's standard deviation here is about 31.
    expect(fail + stall).toBeGreaterThan(850)
    expect(fail + stall).toBeLessThan(1150)
    expect(Math.abs(fail - stall)).toBeLessThan(200)
    expect(plan.counts().stream).toEqual({ fail: 0, stall: 0 })
  })

  it('never strikes at rate 0, and refuses a rate past 0.2', () => {
    expect(sequence('x', 0, 'stream', 1000).every((f) => f === null)).toBe(true)
    expect(() => createFaults({ seed: 'x', rate: 0.5 })).toThrow(expect.objectContaining({ code: 'FAULT_PLAN_INVALID' }))
    expect(() => createFaults({ seed: 'x', rate: -0.01 })).toThrow(expect.objectContaining({ code: 'FAULT_PLAN_INVALID' }))
  })

  it('bounds every stall between half the longest and the longest', () => {
    const stalls = sequence('bounded', 0.2, 'stream', 2000).flatMap((f) => (f?.kind === 'stall' ? [f.ms] : []))
    expect(stalls.length).toBeGreaterThan(50)
    for (const ms of stalls) {
      expect(ms).toBeGreaterThanOrEqual(1500)
      expect(ms).toBeLessThanOrEqual(3000)
    }
  })

  it('tells each fault to onFault with its site and label', () => {
    const told: string[] = []
    const plan = createFaults({ seed: 'told', rate: 0.2, onFault: (site, fault, label) => told.push(`${site} ${fault.kind} ${label}`) })
    for (let i = 0; i < 100; i++) plan.draw('chain', `m${i}`)
    const { fail, stall } = plan.counts().chain
    expect(told).toHaveLength(fail + stall)
    expect(told[0]).toMatch(/^chain (fail|stall) m\d+$/)
  })
})

describe('faults on the simulated chain', () => {
  const simnet = createSimnet({ seed: 'faulty-rpc', genesis: 1704067200, now: () => Date.UTC(2025, 0, 15) })
  const plan = createFaults({ seed: 'faulty-rpc', rate: 0.2, maxStallMs: 200, hangMs: 300 })
  const started = startServer(simnetRpcListener(simnet, { faults: plan }), 0, '127.0.0.1')
  afterAll(async () => (await started).close(100))
  const call = async (method: string, signal?: AbortSignal) =>
    fetch(`${(await started).url}${SIMNET_RPC_PATH}`, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: method === 'Filecoin.StateMarketStorageDeal' ? [1, null] : [] }),
      signal,
    })

  it('draws every way a chain call fails among its failures, and none of them for other sites', () => {
    const draws = createFaults({ seed: 'kinds', rate: 0.2 })
    const failures = new Set<string>()
    for (let i = 0; i < 2000; i++) {
      const f = draws.draw('chain')
      if (f?.kind === 'fail') failures.add(f.as!)
      const other = draws.draw('stream')
      if (other?.kind === 'fail') expect(other.as).toBeUndefined()
    }
    expect([...failures].sort()).toEqual([...CHAIN_FAILURES].sort())
    expect(Object.values(draws.chainFailures()).reduce((a, b) => a + b)).toBe(draws.counts().chain.fail)
  })

  it('fails some calls as a busy node or its proxy does, serves others late, and the rest as usual', async () => {
    const statuses: number[] = []
    const slow: number[] = []
    for (let i = 0; i < 60; i++) {
      const t0 = Date.now()
      const res = await call('Filecoin.ChainHead', AbortSignal.timeout(1000)).catch(() => undefined)
      statuses.push(res?.status ?? 0)
      const body = res?.status === 200 ? await res.json() : undefined
      if (body?.result) {
        expect(body.result.Height).toBe(simnet.headEpoch())
        if (Date.now() - t0 >= 100) slow.push(i)
      } else await res?.body?.cancel()
    }
    const { fail, stall } = plan.counts().chain
    expect(fail).toBeGreaterThan(0)
    expect(stall).toBeGreaterThan(0)
    expect(slow.length).toBeGreaterThanOrEqual(stall)
    expect(statuses.filter((s) => s !== 200).length).toBeLessThanOrEqual(fail)
  })

  it('answers each kind of failure as the software that fails it does, the call not made', async () => {
    const answer = async (failure: ChainFailure, method = 'Filecoin.StateMarketStorageDeal', signal?: AbortSignal) => {
      plan.holdChain(failure, [method])
      try {
        const res = await call(method, signal)
        return { status: res.status, type: res.headers.get('content-type'), body: await res.text() }
      } finally {
        plan.holdChain(null)
      }
    }
    // lotus gateway/handler.go: a 429 and nothing else.
    expect(await answer('rate-limited')).toEqual({ status: 429, type: null, body: '' })
    // lotus gateway/node.go: "server busy. " and x/time/rate's words, n the method's tokens, code 1 as go-jsonrpc sends it.
    expect(JSON.parse((await answer('busy')).body).error).toEqual({
      code: 1,
      message: 'server busy. rate: Wait(n=3) would exceed context deadline',
    })
    expect(JSON.parse((await answer('busy', 'Filecoin.ChainHead')).body).error.message).toMatch(/Wait\(n=2\)/)
    // nginx's own pages: limit_req's 503, a 502 when the node behind it is down.
    expect(await answer('unavailable')).toMatchObject({ status: 503, type: 'text/html', body: expect.stringContaining('503 Service') })
    expect(await answer('bad-gateway')).toMatchObject({ status: 502, body: expect.stringContaining('<center>nginx</center>') })
    // A node that never answers: a client that waits gets the proxy's 504 after hangMs; one that gives up, nothing.
    const t0 = Date.now()
    expect(await answer('timeout')).toMatchObject({ status: 504, body: expect.stringContaining('504 Gateway Time-out') })
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290)
    await expect(answer('timeout', undefined, AbortSignal.timeout(50))).rejects.toThrow()
    // Some other error of the node's: its blockstore misses the state asked about.
    const unknown = JSON.parse((await answer('unknown')).body).error
    expect(unknown).toMatchObject({ code: 1, message: expect.stringMatching(/^ipld: could not find bafy/) })
    // Only the held method fails; released, the node serves as usual.
    plan.holdChain('busy', ['Filecoin.StateMarketStorageDeal'])
    expect((await (await call('Filecoin.StateNetworkVersion')).json()).result).toBe(28)
    plan.holdChain(null)
    expect((await (await call('Filecoin.StateMarketStorageDeal')).json()).error.message).toMatch(/^deal 1 not found/)
    expect(plan.chainFailures()['timeout']).toBeGreaterThanOrEqual(2)
  })
})

describe("faults on a provider's CAR download", () => {
  const bytes = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7) % 251)
  // A client's transfer endpoint that honours Range, as the gateway's does.
  const server = createServer((req, res) => {
    const m = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '')
    const [from, to] = m ? [Number(m[1]), Number(m[2])] : [0, bytes.length - 1]
    res.writeHead(m ? 206 : 200, { 'content-length': String(to - from + 1) }).end(Buffer.from(bytes.subarray(from, to + 1)))
  })
  const listening = new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/car`)),
  )
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('cuts downloads part-way; Curio-like resume still gets every byte right', async () => {
    const url = await listening
    const plan = createFaults({ seed: 'cut', rate: 0.2, maxStallMs: 50 })
    const doFetch = faultyFetch(fetch, plan)
    for (let i = 0; i < 20; i++) {
      const got = new Uint8Array(bytes.length)
      await curioTransfer(
        { url, headers: {}, size: bytes.length },
        {
          fetch: doFetch,
          signal: AbortSignal.timeout(10_000),
          retryDelayMs: 1,
          async write(position, chunk) {
            got.set(chunk, position)
          },
        },
      )
      expect(Buffer.from(got).equals(Buffer.from(bytes))).toBe(true)
    }
    expect(plan.counts().transfer.fail).toBeGreaterThan(0)
    expect(plan.counts().transfer.stall).toBeGreaterThan(0)
  })

  it('a cut body errors after part of it arrived, as a broken connection does', async () => {
    const url = await listening
    // Rate 0.2: draw until the first fault is a failure, the plan being deterministic.
    let seed = 0
    while (createFaults({ seed: `first-${seed}`, rate: 0.2 }).draw('transfer')?.kind !== 'fail') seed++
    const res = await faultyFetch(fetch, createFaults({ seed: `first-${seed}`, rate: 0.2 }))(url)
    let received = 0
    await expect(
      (async () => {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) received += chunk.length
      })(),
    ).rejects.toThrow(/cut/)
    expect(received).toBe(bytes.length / 2)
  })
})

import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import * as Piece from '@filoz/synapse-core/piece'
import { pino } from 'pino'
import { createPublicClient, http, toHex, type Address } from 'viem'
import { afterAll, describe, expect, it } from 'vitest'
import { basicAuth, startPart, type RunningPart } from '../../scripts/lib/stack.ts'
import { fwssViewAbi, pdpVerifierAbi } from '../../server/network/foc/abi.ts'
import { startPdpService } from '../helpers/pdp-part-stack.ts'
import { until } from '../helpers/until.ts'

/**
 * The gateway process SIGKILLed at each step of a PDP add, the kill fired
 * from the simulated Curio's own log line as it reaches the step (this test
 * runs the deal service part, the simulated chain and Onchain Cloud, in its
 * own process, and the gateway part as a child): the providers hold the
 * piece and no add was asked for; an add request taken and its transaction
 * sent, before the provider answers; the transaction in a block. After each
 * kill the gateway starts again; once it settles, the chain is read
 * directly: each group's piece is live (not scheduled for removal) exactly
 * as many times as the gateway counts copies of it, on each provider, and
 * no provider was passed over for an interruption that was the gateway's.
 */
const STEPS: [string, RegExp][] = [
  ['the providers hold the piece, no add asked for', /"msg":"simulated Curio: piece pulled"/],
  ['an add request taken, its transaction sent, no answer yet', /"msg":"simulated Curio: (create-and-add|addPieces) sent"/],
  ['the add transaction in a block', /"msg":"simulated Curio: pieces added"/],
]
const COPIES = 2
// An epoch of half a second: adds land in a few seconds, and no copy is old enough to count as never proved (3 proving periods, 6 minutes).
const SPEED = '60'
const USER = 'kill-test'
const PASSWORD = 'kill-test-password'

describe('a gateway killed during PDP adds', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pdp-kill-'))
  let service: Awaited<ReturnType<typeof startPdpService>>['service'] | undefined
  let gateway: RunningPart | undefined
  /** The step to kill the gateway at, and what to call once it did. */
  let armed: { line: RegExp; killed: (line: string) => void } | undefined
  afterAll(async () => {
    await gateway?.stop()
    await service?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  // Each line the simulation logs, as it logs it: the kill happens inside the provider's handler, before it answers.
  const logger = pino(
    { level: 'info' },
    {
      write(line: string) {
        if (!armed || !gateway || !armed.line.test(line)) return
        process.kill(gateway.pid, 'SIGKILL')
        const { killed } = armed
        armed = undefined
        killed(line)
      },
    },
  )

  it('leaves each group live on chain exactly as often as it counts copies, killed before, during and after an add', async () => {
    const started = await startPdpService({ dataDir, logger, speed: SPEED, providers: 3, copies: COPIES, user: USER, password: PASSWORD })
    service = started.service
    const { env } = started
    const put = async (name: string) => {
      const res = await fetch(`${gateway!.url}/${name}`, {
        method: 'PUT',
        headers: { authorization: basicAuth(USER, PASSWORD) },
        body: randomBytes(40_000),
      })
      expect(res.status).toBe(201)
    }

    const kills: string[] = []
    for (const [i, [step, line]] of STEPS.entries()) {
      const killed = new Promise<string>((resolve) => (armed = { line, killed: resolve }))
      gateway ??= await startPart('gateway', env)
      await put(`file-${i}.bin`)
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`the gateway never reached "${step}":\n${gateway?.output().slice(-4000)}`)), 90_000).unref(),
      )
      kills.push(`${step}: ${await Promise.race([killed, timeout])}`)
      await gateway.stop()
      gateway = undefined
    }
    expect(kills).toHaveLength(STEPS.length)
    gateway = await startPart('gateway', env)

    const contracts = JSON.parse(readFileSync(join(dataDir, 'simfoc', 'contracts.json'), 'utf8')) as Record<string, Address>
    const chain = createPublicClient({ transport: http(service.focRpcUrl) })
    const db = new DatabaseSync(join(dataDir, 'gateway', 'gateway.sqlite'), { readOnly: true })
    type Row = { piece_cid: string; provider: string; state: string; reason_code: string | null }
    const rows = () => db.prepare(`SELECT piece_cid, provider, state, reason_code FROM group_deals WHERE route = 'pdp'`).all() as Row[]
    /** Per group's piece and provider: copies live on chain, and copies the gateway counts. */
    const tally = async () => {
      const out: Record<string, Record<string, [number, number]>> = {}
      const sets = await chain.readContract({
        address: contracts.fwssView,
        abi: fwssViewAbi,
        functionName: 'getClientDataSets',
        args: [started.walletAddress],
      })
      for (const pieceCid of new Set(rows().map((r) => r.piece_cid))) {
        const per = (out[pieceCid] = {} as Record<string, [number, number]>)
        const at = (provider: string) => (per[provider] ??= [0, 0])
        for (const r of rows()) if (r.piece_cid === pieceCid && (r.state === 'published' || r.state === 'active')) at(r.provider)[1]++
        for (const set of sets) {
          const read = (functionName: string, args: unknown[]) =>
            chain.readContract({ address: contracts.pdp, abi: pdpVerifierAbi, functionName, args } as never) as Promise<unknown>
          if (!(await read('dataSetLive', [set.dataSetId]))) continue
          const ids = (await read('findPieceIdsByCid', [set.dataSetId, { data: toHex(Piece.parse(pieceCid).bytes) }, 0n, 64n])) as bigint[]
          const scheduled = (await read('getScheduledRemovals', [set.dataSetId])) as bigint[]
          at(`pdp:${set.providerId}`)[0] += ids.filter((id) => !scheduled.includes(id)).length
        }
      }
      return out
    }
    // Asked once a second: the chain and its providers run in this process, and proofs must keep up.
    const settled = await until(
      async () => {
        await new Promise((r) => setTimeout(r, 1000))
        const inFlight = rows().some((r) => r.state === 'proposing' || r.state === 'proposed')
        const t = await tally()
        const agree = Object.values(t).every((per) => {
          const counted = Object.values(per).reduce((n, [, c]) => n + c, 0)
          return counted === COPIES && Object.values(per).every(([live, c]) => live === c)
        })
        // Files put while a killed gateway had not sealed the last group may share one with the next: groups, not files, are counted.
        return !inFlight && Object.keys(t).length > 0 && agree ? t : undefined
      },
      'every group stored twice, the chain agreeing with the gateway',
      150_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${kills.join('\n')}\n${JSON.stringify(rows())}\n${gateway?.output().slice(-4000)}`)
    })
    // On every provider, every group: live on chain exactly as many times as counted, at most once.
    for (const per of Object.values(settled))
      for (const [live, counted] of Object.values(per)) expect([live, counted]).toEqual([counted, Math.min(counted, 1)])
    // No provider passed over: every copy that did not count failed for the gateway's own stop, or was one too many.
    const failures = new Set(rows().flatMap((r) => (r.reason_code ? [r.reason_code] : [])))
    expect([...failures].filter((code) => code !== 'STOPPED_BEFORE_ADD' && code !== 'EXTRA_COPY')).toEqual([])
    db.close()
  }, 300_000)
})

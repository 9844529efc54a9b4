import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import * as Piece from '@filoz/synapse-core/piece'
import { pino } from 'pino'
import { createPublicClient, http, parseAbi, toHex, type Address } from 'viem'
import { afterAll, describe, expect, it } from 'vitest'
import { basicAuth, startPart, type RunningPart } from '../../scripts/lib/stack.ts'
import { pdpVerifierAbi } from '../../server/network/foc/abi.ts'
import { startPdpService } from '../helpers/pdp-part-stack.ts'
import { until } from '../helpers/until.ts'

/**
 * The gateway process SIGKILLed at each step of a compaction and of the
 * retirement that ends it, as pdp-kill.test.ts does for an add (this test
 * runs the deal service part, the simulated chain and Onchain Cloud, in its
 * own process, and the gateway part as a child): a group 60 % deleted is
 * marked for compaction; one of its live files is written again, the others
 * not yet; the new group's add is sent, not answered; the old group's first
 * piece removal is sent, the second not asked. After each kill the gateway
 * starts again on the same data. Throughout, the live files keep the copies
 * the policy asks for (the gateway's word, at every look); at the end, read
 * on chain: each group's piece was added as many times as the policy asks,
 * no more; each of the old group's pieces was asked to be removed once and
 * is scheduled or removed; the live files read back byte for byte.
 */
const STEPS: { step: string; part: 'gateway' | 'chain'; line: RegExp }[] = [
  { step: 'a group marked for compaction', part: 'gateway', line: /"msg":"compacting group \d+: \d+ % of its bytes/ },
  {
    step: 'one live file written again, others not yet',
    part: 'gateway',
    line: /"msg":"compacting group \d+: live file 1 of [2-9] written again"/,
  },
  { step: 'the new group’s add sent, no answer yet', part: 'chain', line: /"msg":"simulated Curio: (create-and-add|addPieces) sent"/ },
  { step: 'the old group’s first piece removal sent', part: 'chain', line: /"msg":"simulated Curio: piece removal sent"/ },
]
const COPIES = 2
// An epoch of a quarter second: a copy is proved (and counts as retrievable) within a minute of its add (calibration's 240-epoch period).
const SPEED = '240'
const USER = 'kill-test'
const PASSWORD = 'kill-test-password'
const FILES = 10
const DELETED = 6
const FILE_BYTES = 512 * 1024

describe('a gateway killed during a compaction and its retirement', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'compact-kill-'))
  let service: Awaited<ReturnType<typeof startPdpService>>['service'] | undefined
  let gateway: RunningPart | undefined
  /** The step to kill the gateway at, and what to call once it did. */
  let armed: { part: 'gateway' | 'chain'; line: RegExp; killed: (line: string) => void } | undefined
  /** The simulated Curios' removals sent (data set/piece), and their removal requests that failed. */
  const removalsSent: string[] = []
  const removalsFailed: string[] = []
  afterAll(async () => {
    await gateway?.stop()
    await service?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  /** Kills the gateway if `text` (the part's output) has the armed step's line. */
  const watch = (part: 'gateway' | 'chain', text: string) => {
    if (!armed || armed.part !== part || !gateway) return
    const line = text.split('\n').find((l) => armed!.line.test(l))
    if (!line) return
    process.kill(gateway.pid, 'SIGKILL')
    const { killed } = armed
    armed = undefined
    killed(line)
  }
  // Each line the simulation logs, as it logs it: a chain-side kill happens inside the provider's handler, before it answers.
  const logger = pino(
    { level: 'info' },
    {
      write(line: string) {
        const removal =
          /"msg":"simulated Curio: piece removal sent"/.test(line) && (JSON.parse(line) as { dataSetId: number; pieceIds: number[] })
        if (removal) for (const id of removal.pieceIds) removalsSent.push(`${removal.dataSetId}/${id}`)
        // A removal request the provider failed (a second one for a piece already scheduled, the chain refusing it).
        if (/"url":"[^"]*\/pieces\/\d+[^\n]*simulated Curio/.test(line)) removalsFailed.push(line)
        watch('chain', line)
      },
    },
  )

  it('loses no file, keeps its copies, and adds or removes no piece twice, killed at each step', async () => {
    const started = await startPdpService({ dataDir, logger, speed: SPEED, providers: 2, copies: COPIES, user: USER, password: PASSWORD })
    service = started.service
    const env = {
      ...started.env,
      RETIRE_AFTER_SECONDS: '3',
      // The rewrite's line per file.
      LOG_LEVEL: 'debug',
    }
    const start = async () => {
      // Whole lines: a chunk of the child's output may end inside one.
      let partial = ''
      gateway = await startPart('gateway', env, (text) => {
        const lines = (partial + text).split('\n')
        partial = lines.pop()!
        watch('gateway', lines.join('\n'))
      })
    }
    const auth = { authorization: basicAuth(USER, PASSWORD) }
    const files = new Map(Array.from({ length: FILES }, (_, i) => [`/f${i}.bin`, randomBytes(FILE_BYTES)]))
    const kept = [...files.keys()].slice(DELETED)

    await start()
    for (const [path, body] of files)
      expect((await fetch(`${gateway!.url}${path}`, { method: 'PUT', headers: auth, body })).status).toBe(201)
    let lastInfo: unknown
    /** The gateway's word on a file's copies that can be read back; undefined while it is down. */
    const copiesOf = async (path: string): Promise<number | undefined> => {
      try {
        const res = await fetch(`${gateway!.url}/file-info`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ filePath: path, verbose: true }),
        })
        lastInfo = [res.status, await res.clone().text()]
        if (!res.ok) return undefined
        return ((await res.json()) as { result: { file: { details: { retrievableCopies: number } } } }).result.file.details
          .retrievableCopies
      } catch {
        return undefined
      }
    }
    await until(
      async () => ((await Promise.all(kept.map(copiesOf))).every((n) => n === COPIES) ? true : undefined),
      'the files stored twice',
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(lastInfo)}\n${gateway?.output().slice(-6000)}`)
    })
    const db = new DatabaseSync(join(dataDir, 'gateway', 'gateway.sqlite'), { readOnly: true })
    // Each group with the piece CID its PDP copies were added under (a v2 one, as on chain).
    const groups = () =>
      db
        .prepare(
          `SELECT g.id, g.retired_ms, (SELECT d.piece_cid FROM group_deals d WHERE d.group_id = g.id AND d.route = 'pdp' LIMIT 1) AS piece_cid
           FROM content_groups g ORDER BY g.id`,
        )
        .all() as {
        id: number
        piece_cid: string | null
        retired_ms: number | null
      }[]
    const [old] = groups()

    // From the first delete on, the live files' copies as the gateway counts them, twice a second while it is up.
    const seen: number[] = []
    let looking = true
    const looks = (async () => {
      while (looking) {
        for (const p of kept) {
          const n = await copiesOf(p)
          if (n !== undefined) seen.push(n)
        }
        await new Promise((r) => setTimeout(r, 500))
      }
    })()
    for (const path of [...files.keys()].slice(0, DELETED))
      expect((await fetch(`${gateway!.url}${path}`, { method: 'DELETE', headers: auth })).status).toBe(204)

    const kills: string[] = []
    for (const { step, part, line } of STEPS) {
      const killed = new Promise<string>((resolve) => (armed = { part, line, killed: resolve }))
      if (!gateway) await start()
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`the gateway never reached "${step}":\n${kills.join('\n')}\n${gateway?.output().slice(-6000)}`)),
          90_000,
        ).unref(),
      )
      kills.push(`${step}: ${await Promise.race([killed, timeout])}`)
      await gateway!.stop()
      gateway = undefined
    }
    expect(kills).toHaveLength(STEPS.length)
    await start()

    const contracts = JSON.parse(readFileSync(join(dataDir, 'simfoc', 'contracts.json'), 'utf8')) as Record<string, Address>
    const chain = createPublicClient({ transport: http(service.focRpcUrl) })
    const read = (functionName: string, args: unknown[]) =>
      chain.readContract({ address: contracts.pdp, abi: pdpVerifierAbi, functionName, args } as never) as Promise<unknown>
    const events = parseAbi([
      'struct Cid { bytes data; }',
      'event PiecesAdded(uint256 indexed setId, uint256[] pieceIds, Cid[] pieceCids)',
      'event PiecesRemoved(uint256 indexed setId, uint256[] pieceIds)',
    ])
    /** Per piece CID (as bytes), every add on chain (data set/piece), and every piece taken off chain or scheduled to be. */
    const onChain = async () => {
      const logs = await chain.getContractEvents({ address: contracts.pdp, abi: events, fromBlock: 0n })
      const added = new Map<string, string[]>()
      const removed = new Set<string>()
      for (const log of logs) {
        const { setId, pieceIds } = log.args as { setId: bigint; pieceIds: bigint[] }
        if (log.eventName === 'PiecesAdded') {
          const cids = (log.args as { pieceCids: { data: string }[] }).pieceCids
          pieceIds.forEach((id, i) => added.set(cids[i].data, [...(added.get(cids[i].data) ?? []), `${setId}/${id}`]))
        } else for (const id of pieceIds) removed.add(`${setId}/${id}`)
      }
      for (const setId of new Set([...added.values()].flat().map((k) => BigInt(k.split('/')[0]))))
        for (const id of (await read('getScheduledRemovals', [setId])) as bigint[]) removed.add(`${setId}/${id}`)
      return { added, removed }
    }
    const bytesOf = (pieceCid: string) => toHex(Piece.parse(pieceCid).bytes)
    // Settled: the old group retired, each of its pieces off chain, every other group's piece on chain as often as the policy asks.
    const settled = await until(
      async () => {
        await new Promise((r) => setTimeout(r, 1000))
        const all = groups()
        if (all.find((g) => g.id === old.id)?.retired_ms === null) return undefined
        const { added, removed } = await onChain()
        const oldPieces = added.get(bytesOf(old.piece_cid!)) ?? []
        if (oldPieces.length !== COPIES || !oldPieces.every((k) => removed.has(k))) return undefined
        const live = all.filter((g) => g.retired_ms === null && g.piece_cid !== null)
        if (live.length === 0) return undefined
        for (const g of live)
          if ((added.get(bytesOf(g.piece_cid!)) ?? []).filter((k) => !removed.has(k)).length !== COPIES) return undefined
        return { added, removed, oldPieces, live }
      },
      'the old group retired, its pieces off chain, the new groups stored twice',
      120_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${kills.join('\n')}\n${JSON.stringify(groups())}\n${gateway?.output().slice(-6000)}`)
    })
    looking = false
    await looks

    // No piece added more often than the policy asks: no group stored twice across the kills.
    for (const [cid, adds] of settled.added) expect([cid, adds.length]).toEqual([cid, COPIES])
    // Each of the old group's pieces asked to be removed once, and nothing else removed.
    expect(removalsSent.sort()).toEqual([...settled.oldPieces].sort())
    expect(removalsFailed).toEqual([])
    expect([...settled.removed].sort()).toEqual([...settled.oldPieces].sort())
    // The live files never had fewer copies than the policy, at any look; and read back byte for byte.
    expect(seen.length).toBeGreaterThan(10)
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(COPIES)
    for (const p of kept) {
      const res = await fetch(`${gateway!.url}${p}`, { headers: auth })
      expect(res.status).toBe(200)
      expect(Buffer.from(await res.arrayBuffer()).equals(files.get(p)!)).toBe(true)
    }
    for (const p of [...files.keys()].slice(0, DELETED)) expect((await fetch(`${gateway!.url}${p}`, { headers: auth })).status).toBe(404)
    db.close()
  }, 300_000)
})

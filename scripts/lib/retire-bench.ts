import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { formatUnits } from 'viem'
import { startDealStack, type DealStack } from './deal-stack.ts'

const run = promisify(execFile)
const EPOCHS_PER_MONTH = 86_400n

export interface RetireBenchOptions {
  files: number
  fileKib: number
  /** Folders the files are spread over, uploaded one after the other; half of them are deleted. */
  folders: number
  groupMib: number
}

export interface RetireBench {
  groups: number
  retiredGroups: number
  /** Deleted files' bytes left inside live groups (compaction's share). */
  deadInLiveGroups: number
  dataSets: number
  /** USDFC a month (18 decimals), as the account's rate on the simulated chain: with every copy kept, and after retirement. */
  keptPerMonth: bigint
  retiredPerMonth: bigint
  /** What `npm run deals -- usage` said before retirement would be paid after it. */
  reportedAfter: string
  datasetFeePerMonth: string
  seconds: number
}

/** `npm run deals -- usage --json` on the stack's records. */
async function usage(s: DealStack) {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/deals.ts', 'usage', '--json'], {
    env: { ...process.env, DATA_DIR: s.dir },
  })
  return JSON.parse(stdout)
}

/**
 * Retire section: `files` files of `fileKib` KiB, in `folders` folders uploaded one after the other (groups of
 * `groupMib` MiB filled in upload order, as files uploaded over time fill groups), each group stored as 2 PDP
 * copies on the simulated Onchain Cloud (its chain on the wall clock); half the folders are deleted. What the
 * account pays a month, read from the chain: with every copy kept (what the gateway paid before issue 45: no group
 * was ever retired), and once the dead groups are retired and their pieces removed at the providers' next proving
 * period. Nothing is sent to the deal market.
 */
export async function benchRetire(o: RetireBenchOptions): Promise<RetireBench> {
  const started = performance.now()
  const s = await startDealStack({
    seed: 'retire bench',
    copies: 0,
    withoutService: true,
    retireAfterSeconds: 3600,
    groupSize: o.groupMib * 2 ** 20,
    retrievalCheckMs: 3_600_000,
    foc: { copies: 2, endorsed: 3, usdfc: 10n ** 21n },
  })
  try {
    const perFolder = Math.ceil(o.files / o.folders)
    for (let f = 0; f < o.folders; f++) {
      const folder = `/folder-${f}`
      const made = await fetch(`${s.gatewayServer.url}${folder}`, { method: 'MKCOL' })
      if (made.status !== 201) throw new Error(`MKCOL ${folder} answered ${made.status}`)
      for (let i = f * perFolder; i < Math.min(o.files, (f + 1) * perFolder); i++) {
        // Distinct bytes per file: no two files share a block.
        const body = Buffer.alloc(o.fileKib * 1024, i % 251)
        body.writeUInt32BE(i, 0)
        const res = await s.put(`${folder}/file-${i}.bin`, body)
        if (res.status !== 201) throw new Error(`PUT file ${i} answered ${res.status}`)
      }
    }
    await s.seal()
    const allOffloaded = async () => (await s.gateway.content.groups()).every((g) => g.state === 'offloaded')
    if (!(await s.runUntil(allOffloaded, { max: 3000, pauseMs: 100, epochsPerTick: 10 })))
      throw new Error('the groups were not all offloaded after 3000 passes')
    const groups = (await s.gateway.content.groups()).length
    const rate = async () => (await s.focClient!.account()).lockupRatePerEpoch * EPOCHS_PER_MONTH

    for (let f = 0; f < o.folders / 2; f++) {
      const res = await s.remove(`/folder-${f}`)
      if (res.status !== 204) throw new Error(`DELETE /folder-${f} answered ${res.status}`)
    }
    // One pass sees the dead groups; nothing is retired yet: this is what is paid when no group is ever retired.
    await s.runUntil(() => false, { max: 1 })
    const kept = await rate()
    const report = await usage(s)
    if (report.pdp.perMonthNow !== formatUnits(kept, 18))
      throw new Error(`npm run deals -- usage says ${report.pdp.perMonthNow} USDFC a month, the chain ${formatUnits(kept, 18)}`)

    // The grace period passes (an hour of the gateway's clock); the providers remove the pieces at their next proving period.
    await s.runUntil(() => false, { max: 4 })
    const deadline = Date.now() + 120_000
    let retired = await rate()
    while (formatUnits(retired, 18) !== report.pdp.perMonthAfter && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500))
      retired = await rate()
    }
    const after = await usage(s)
    return {
      groups,
      retiredGroups: after.bytes.retired.groups,
      deadInLiveGroups: after.bytes.live.deadInLiveGroups,
      dataSets: after.pdp.dataSets,
      keptPerMonth: kept,
      retiredPerMonth: retired,
      reportedAfter: report.pdp.perMonthAfter,
      datasetFeePerMonth: after.pdp.rates.datasetFeePerMonth,
      seconds: (performance.now() - started) / 1000,
    }
  } finally {
    await s.close()
  }
}

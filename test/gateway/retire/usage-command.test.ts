import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { formatUnits } from 'viem'
import { startDealStack, type DealStack } from '../deals/harness.ts'

/**
 * `npm run deals -- usage` on a gateway's real records, made by the simulated
 * stack on both routes (a deal-market deal and two PDP copies of each group):
 * what an admin reads before a delete, in the grace period and after
 * retirement, checked against what the chains themselves charge: the PDP
 * account's rate on the simulated Onchain Cloud, and the market deals'
 * StoragePricePerEpoch on the simulated chain.
 */
const run = promisify(execFile)
let stack: DealStack | undefined
afterAll(async () => {
  await stack?.close()
})

const EPOCHS_PER_MONTH = 86_400n
const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 17 + (i >> 8)) & 0xff)
const details = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.details
const pass = (s: DealStack) => s.runUntil(() => false, { max: 1 })

async function usage(s: DealStack, ...args: string[]): Promise<any> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/deals.ts', 'usage', ...args], {
    env: { ...process.env, DATA_DIR: s.dir, ...(s.databaseUrl && { DATABASE_URL: s.databaseUrl }) },
  })
  return args.includes('--json') ? JSON.parse(stdout) : stdout
}

/** What the Onchain Cloud account pays a month now, as the chain has it (the sum of its rails' rates). */
const chainPdpPerMonth = async (s: DealStack) => formatUnits((await s.focClient!.account()).lockupRatePerEpoch * EPOCHS_PER_MONTH, 18)

/** What the market deals still on chain and not ended cost a month, from the deals the chain holds. */
async function chainMarketPerMonth(s: DealStack, groupIds?: number[]): Promise<{ perMonth: string; endEpochs: number[] }> {
  let total = 0n
  const endEpochs: number[] = []
  for (const g of await s.gateway.content.groups()) {
    if (groupIds && !groupIds.includes(g.id)) continue
    for (const d of await s.gateway.dealStore.ofGroup(g.id, 'market')) {
      if (d.state !== 'active' && d.state !== 'published') continue
      const onChain = (await s.simnet.getDeal(d.dealId!))!.proposal
      total += BigInt(onChain.StoragePricePerEpoch) * EPOCHS_PER_MONTH
      endEpochs.push(onChain.EndEpoch)
    }
  }
  return { perMonth: formatUnits(total, 18), endEpochs }
}

describe('npm run deals -- usage: bytes stored, dead and retired, and what they cost a month', () => {
  it('shows what the copies cost now, what retiring the dead groups saves and the spend after, as the chains charge it', async () => {
    const s = (stack = await startDealStack({
      seed: 'usage report',
      copies: 1,
      price: '5000000',
      retireAfterSeconds: 3600,
      retrievalCheckMs: 60_000,
      foc: { copies: 2, endorsed: 3 },
    }))
    // One file alone in its group; two more together in another, of which one will be deleted.
    expect((await s.put('/gone.bin', bytes(300_000, 1))).status).toBe(201)
    await s.seal()
    expect((await s.put('/kept.bin', bytes(300_000, 2))).status).toBe(201)
    expect((await s.put('/half.bin', bytes(300_000, 3))).status).toBe(201)
    await s.seal()
    const paths = ['/gone.bin', '/kept.bin', '/half.bin']
    const offloaded = async () => (await Promise.all(paths.map((p) => details(s, p)))).every((d) => d.state === 'offloaded')
    expect(await s.runUntil(offloaded, { max: 900, pauseMs: 100, epochsPerTick: 10 })).toBe(true)
    const gone = (await details(s, '/gone.bin')).groups[0].groupId
    const goneSize = (await s.gateway.content.group(gone))!.size

    // Before any delete: everything live, and the PDP spend is the account's rate on chain.
    const before = await usage(s, '--json')
    expect(before.bytes.dead.bytes).toBe(0)
    expect(before.bytes.retired.bytes).toBe(0)
    expect(before.bytes.live.deadInLiveGroups).toBe(0)
    expect(before.pdp.copies).toBeGreaterThanOrEqual(4)
    expect(before.pdp.perMonthNow).toBe(await chainPdpPerMonth(s))
    expect(before.pdp.savedPerMonth).toBe('0')
    expect(before.pdp.rates).toMatchObject({ storagePerTibPerMonth: '2.5', datasetFeePerMonth: '0.024' })
    const market = await chainMarketPerMonth(s)
    expect(before.market.perMonthNow).toBe(market.perMonth)
    expect(Number(before.market.perMonthNow)).toBeGreaterThan(0)

    // A file alone in its group and one of two in another are deleted: in the grace period, the first group is dead
    // and still paid for; the second is live, the deleted file's bytes inside it.
    expect((await s.remove('/gone.bin')).status).toBe(204)
    expect((await s.remove('/half.bin')).status).toBe(204)
    await pass(s)
    const grace = await usage(s, '--json')
    expect(grace.bytes.dead).toEqual({ groups: 1, bytes: goneSize })
    expect(grace.bytes.live.deadInLiveGroups).toBe(300_000)
    expect(grace.pdp.perMonthNow).toBe(await chainPdpPerMonth(s))
    expect(Number(grace.pdp.savedPerMonth)).toBeGreaterThan(0)
    // The saving is the dead group's pieces' share of the size price: the data sets keep the other group's pieces, and their fee.
    expect(Number(grace.pdp.savedPerMonth)).toBeLessThan(0.024)
    const deadDeals = await chainMarketPerMonth(s, [gone])
    expect(grace.market.dead).toMatchObject({ deals: 1, perMonth: deadDeals.perMonth, paidUntilEpoch: deadDeals.endEpochs[0] })
    expect(grace.market.savedPerMonth).toBe('0')
    const graceText = await usage(s)
    expect(graceText).toContain(`saves ${grace.pdp.savedPerMonth} USDFC a month`)
    expect(graceText).toContain(`${deadDeals.perMonth} FIL a month (1 deal), paid until epoch ${deadDeals.endEpochs[0]}, not renewed`)

    // Retired: its pieces leave their data sets at the providers' next proving period, and the account then pays what
    // the report said it would after retirement; its market deal is still paid, until its end.
    await pass(s)
    await pass(s)
    expect((await s.gateway.content.group(gone))!.retiredMs).toBeDefined()
    const deadline = Date.now() + 90_000
    while ((await chainPdpPerMonth(s)) !== grace.pdp.perMonthAfter && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500))
    expect(await chainPdpPerMonth(s)).toBe(grace.pdp.perMonthAfter)
    const after = await usage(s, '--json')
    expect(after.bytes.retired).toEqual({ groups: 1, bytes: goneSize })
    expect(after.bytes.dead.bytes).toBe(0)
    expect(after.pdp.perMonthNow).toBe(grace.pdp.perMonthAfter)
    expect(after.pdp.savedPerMonth).toBe('0')
    expect(after.market.retired).toMatchObject({ deals: 1, perMonth: deadDeals.perMonth, paidUntilEpoch: deadDeals.endEpochs[0] })
    expect(after.market.perMonthNow).toBe(market.perMonth)
    expect(await usage(s)).toContain(`paid until epoch ${deadDeals.endEpochs[0]}, not renewed`)
  }, 300_000)
})

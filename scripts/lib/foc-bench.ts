import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPublicClient, http, parseUnits } from 'viem'
import { connectOnchainCloud } from '../../server/compose/onchain-cloud.ts'
import { loadConfig } from '../../server/shared/config.ts'
import { createPieceHasher, pieceCidV2 } from '../../server/shared/piece.ts'
import type { FocClient, FocCopy } from '../../server/network/foc/client.ts'
import { openKeystore } from '../../server/network/wallet/keystore.ts'
import { percentile } from './percentile.ts'
import { startPart } from './stack.ts'

export interface FocBenchOptions {
  files: number
  fileKib: number
  largeMib: number
  /** SIMNET_SPEED of the simulated chain the Onchain Cloud follows. */
  speed: number
}

/** How long after `store` returns until one of its copies has a proof on chain, in ms and epochs. */
async function untilFirstProof(
  client: FocClient,
  copies: FocCopy[],
  startEpoch: number,
  head: () => Promise<number>,
): Promise<{ ms: number; epochs: number }> {
  const started = performance.now()
  for (;;) {
    for (const copy of copies) {
      if ((await client.copyProof(copy)).proved) return { ms: performance.now() - started, epochs: (await head()) - startEpoch }
    }
    if (performance.now() - started > 600_000) throw new Error('no proof within 10 minutes')
    await new Promise((r) => setTimeout(r, 50))
  }
}

const GIB = 2 ** 30
const usd = (wei: bigint) => Number(wei) / 1e18

/**
 * What the copies stored cost on the simulated GA contracts, per GiB-month of bytes stored (all
 * copies counted), against GA's published price: 2.50 USDFC per TiB-month per copy plus 0.024 a
 * month per data set (FWSS 1.3.1 PriceListUSDFC.sol), and the one-time fees taken from the data
 * sets' reserves (creation and adds; 0.1 USDFC each when created).
 */
async function printSpend(client: FocClient, storedBytes: number): Promise<void> {
  const [account, sets] = await Promise.all([client.account(), client.clientDataSets()])
  const monthly = usd(account.lockupRatePerEpoch * 86_400n)
  const dataSetBytes = sets.reduce((sum, d) => sum + (Number(d.leafCount) * 32 * 127) / 128, 0)
  const published = (2.5 * dataSetBytes) / 2 ** 40 + 0.024 * sets.filter((d) => d.leafCount > 0n).length
  const fees = sets.reduce((sum, d) => sum + usd(10n ** 17n - d.lifecycleReserve - d.pendingFees), 0)
  const gib = storedBytes / GIB
  console.log(
    `\nonchain cloud: what the copies cost (${(storedBytes / 2 ** 20).toFixed(1)} MiB stored in ${sets.length} data sets, all copies)`,
  )
  console.log('                                 USDFC a month   per GiB-month')
  console.log(`  paid (the account's rate)      ${monthly.toFixed(6).padStart(13)}   ${(monthly / gib).toFixed(4).padStart(13)}`)
  console.log(`  GA's published price           ${published.toFixed(6).padStart(13)}   ${(published / gib).toFixed(4).padStart(13)}`)
  console.log(`  one-time fees so far: ${fees.toFixed(4)} USDFC (creation 0.025 per data set, 0.0008 per add)`)
  console.log('  The size part alone is 2.5 USDFC per TiB-month (0.0024 per GiB-month); small files pay mostly the data set fee.')
}

/**
 * Onchain Cloud section: the gateway's side of the PDP route, through the
 * unchanged Synapse SDK, against the simulated Onchain Cloud of a deal
 * service part (another process: what is measured here is the client's CPU).
 * Time to the first proved copy of a file (upload, pull to a second
 * provider, pieces added on chain, then the provider's first proof, which
 * waits for its proving period's challenge window), and CPU per GiB stored.
 */
export async function benchOnchainCloud(o: FocBenchOptions): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-foc-'))
  const keystore = openKeystore(join(dataDir, 'wallet'), 'mainnet')
  keystore.create()
  const service = await startPart('service', {
    DATA_DIR: dataDir,
    SERVICE_PORT: '0',
    SIMNET_RPC_PORT: '0',
    SIMFOC_RPC_PORT: '0',
    SIMNET_SPEED: String(o.speed),
    TICKER_ENABLED: 'false',
  })
  try {
    const rpcUrl = /"url":"(http:[^"]+)"[^\n]*simulated Onchain Cloud/.exec(service.output())![1]
    // Found as the wallet command finds it: its RPC and the contracts file in DATA_DIR.
    const client = await connectOnchainCloud(loadConfig({ DATA_DIR: dataDir, SIMFOC_RPC_URL: rpcUrl }), keystore.evmAccount())
    const publicClient = createPublicClient({ transport: http(rpcUrl) })
    const head = async () => Number(await publicClient.getBlockNumber({ cacheTime: 0 }))
    const funding = await client.funding(Math.max(o.largeMib * 2 ** 20, o.fileKib * 1024))
    await client.fund(funding.depositNeeded + parseUnits('50', 18))

    // Committed: `store` returns once both copies' pieces are added and confirmed on chain; proved: a first proof of one.
    const committed: { ms: number; epochs: number }[] = []
    const proved: { ms: number; epochs: number }[] = []
    let storedBytes = 0
    for (let i = 0; i < o.files; i++) {
      const started = performance.now()
      const startEpoch = await head()
      const stored = await client.store(randomBytes(o.fileKib * 1024), { copies: 2 })
      committed.push({ ms: performance.now() - started, epochs: (await head()) - startEpoch })
      storedBytes += stored.size * stored.copies.length
      const proof = await untilFirstProof(client, stored.copies, startEpoch, head)
      proved.push({ ms: performance.now() - started, epochs: proof.epochs })
      // Progress on stderr: the section runs for minutes, and its table goes to stdout at the end.
      process.stderr.write(
        `  onchain cloud: file ${i + 1}/${o.files} committed after ${(committed[i].ms / 1000).toFixed(1)} s, proved after ${(proved[i].ms / 1000).toFixed(1)} s\n`,
      )
    }
    const epochMs = 30_000 / o.speed
    console.log(
      `\nonchain cloud: time to committed and to proved (${o.files} files × ${o.fileKib} KiB, 2 copies each, calibration's schedule, SIMNET_SPEED=${o.speed}: an epoch is ${epochMs.toFixed(0)} ms)`,
    )
    console.log(
      "  Proved is mostly the proving schedule: FWSS's first challenge window opens up to a proving period (240 epochs) after the data set starts proving.",
    )
    console.log('                          p50        p95   on a real network (×30 s), p50')
    for (const [name, times] of [
      ['committed', committed],
      ['proved', proved],
    ] as const) {
      const ms = times.map((t) => t.ms)
      const epochs = times.map((t) => t.epochs)
      const real = (percentile(epochs, 0.5) * 30) / 60
      // Only proved is bound by the schedule; committed's epochs here are mostly the client's and providers' own work.
      const realWords = name === 'proved' ? (real < 1 ? `${(real * 60).toFixed(0)} s` : `${real.toFixed(0)} min`) : '-'
      console.log(
        `  ${`${name} wall s`.padEnd(18)}${(percentile(ms, 0.5) / 1000).toFixed(1).padStart(8)}   ${(percentile(ms, 0.95) / 1000).toFixed(1).padStart(8)}`,
      )
      console.log(
        `  ${`${name} epochs`.padEnd(18)}${String(percentile(epochs, 0.5)).padStart(8)}   ${String(percentile(epochs, 0.95)).padStart(8)}   ${realWords}`,
      )
    }
    console.log(
      `  Committed counts epochs of ${epochMs.toFixed(0)} ms spent in HTTP and CPU; on a real chain it is the few blocks its transactions wait for (minutes), not epochs × 30 s.`,
    )

    await printSpend(client, storedBytes)

    if (o.largeMib > 0) {
      // The same bytes twice: once as the SDK alone stores them (it computes the piece CID in JS), once as the
      // gateway's PDP route does (its sealing's native piece CID, handed to the SDK as a v2 CID, the hashing counted here).
      const measure = async (store: (bytes: Uint8Array) => Promise<unknown>) => {
        const bytes = randomBytes(o.largeMib * 2 ** 20)
        const cpu = process.cpuUsage()
        const started = performance.now()
        await store(bytes)
        const used = process.cpuUsage(cpu)
        return { seconds: (used.user + used.system) / 1e6, wall: (performance.now() - started) / 1000, gib: bytes.length / 2 ** 30 }
      }
      const sdk = await measure((bytes) => client.store(bytes, { copies: 2 }))
      const route = await measure((bytes) => {
        const hasher = createPieceHasher()
        hasher.update(bytes)
        return client.store(bytes, { copies: 2, pieceCid: pieceCidV2(hasher.digest().pieceCid, bytes.length) })
      })
      console.log(
        `\nonchain cloud: one ${o.largeMib} MiB file stored with 2 copies, CPU of the client's process (piece CID, upload, signatures)`,
      )
      console.log('                          wall s   CPU s   CPU s per GiB   MiB/s')
      for (const [name, m] of [
        ['SDK computing CommP', sdk],
        ['gateway route (given)', route],
      ] as const) {
        console.log(
          `  ${name.padEnd(22)} ${m.wall.toFixed(1).padStart(7)} ${m.seconds.toFixed(2).padStart(7)} ${(m.seconds / m.gib).toFixed(1).padStart(15)} ${(o.largeMib / m.wall).toFixed(1).padStart(7)}`,
        )
      }
      console.log(`  the route's piece CID saves ${(sdk.seconds / route.seconds).toFixed(1)}× the client's CPU`)
    }
  } finally {
    await service.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

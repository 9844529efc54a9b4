import { createHash, randomFillSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { pino } from 'pino'
import { writeCarFile, type CarJob } from '../../server/gateway/content/group-car.ts'
import { createSealPool } from '../../server/gateway/content/seal-pool.ts'

const BLOCK = 1 << 20
const GROUP_BLOCKS = 63 // 63 MiB of 1 MiB leaves: the CAR fits a 64 MiB piece

/**
 * Sealing on its own: full groups of 1 MiB raw blocks already in their block
 * files (as a big upload leaves them), written into CARs with their piece CIDs
 * one after another on this thread, then all at once on the seal pool (one
 * thread per core), beside node's SHA-256 over the same bytes.
 */
export async function benchSealing(totalMiB: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-seal-'))
  const groups = Math.max(2, Math.round(totalMiB / GROUP_BLOCKS))
  const jobs: CarJob[] = []
  const block = Buffer.alloc(BLOCK)
  let shaSeconds = 0
  try {
    for (let g = 0; g < groups; g++) {
      const blocks: CarJob['blocks'] = []
      const bytes = Buffer.alloc(GROUP_BLOCKS * BLOCK)
      for (let b = 0; b < GROUP_BLOCKS; b++) {
        randomFillSync(block)
        block.copy(bytes, b * BLOCK)
        const started = performance.now()
        const digest = createHash('sha256').update(block).digest()
        shaSeconds += (performance.now() - started) / 1000
        blocks.push({ cid: CID.create(1, 0x55, Digest.create(0x12, digest)).toString(), offset: b * BLOCK, length: BLOCK })
      }
      writeFileSync(join(dir, `${g}.blocks`), bytes)
      jobs.push({ groupId: g, blocks, roots: [blocks[0].cid], blockPath: join(dir, `${g}.blocks`), carPath: join(dir, `${g}.car`) })
    }
    const mib = groups * GROUP_BLOCKS

    // Warm (JIT, page cache) like the pool's threads below.
    await writeCarFile(jobs[0])
    let started = performance.now()
    for (const job of jobs) await writeCarFile(job)
    const oneThread = mib / ((performance.now() - started) / 1000)

    const threads = availableParallelism()
    const pool = createSealPool({ size: threads, logger: pino({ level: 'silent' }) })
    try {
      // A first job per thread starts the threads; the measured round then runs on warm ones.
      await Promise.all(jobs.slice(0, threads).map((job) => pool.seal(job)))
      started = performance.now()
      await Promise.all(jobs.map((job) => pool.seal(job)))
    } finally {
      await pool.close()
    }
    const allThreads = mib / ((performance.now() - started) / 1000)
    const sha = mib / shaSeconds

    console.log(`\nsealing on its own: ${groups} full groups of ${GROUP_BLOCKS} MiB (CAR written and fsynced, piece CID), no idle wait`)
    console.log(`  node sha-256, same bytes  : ${sha.toFixed(0)} MiB/s (one core)`)
    console.log(
      `  sealing, one thread       : ${oneThread.toFixed(0)} MiB/s (target >= 200 MiB/s per core; ratio to sha-256 ${(oneThread / sha).toFixed(2)})`,
    )
    console.log(
      `  sealing, ${threads} threads (pool) : ${allThreads.toFixed(0)} MiB/s (${(allThreads / threads).toFixed(0)} MiB/s per core; ${(allThreads / oneThread).toFixed(2)}× one thread)`,
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

import { afterAll, describe, expect, it } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CarWriter } from '@ipld/car/writer'
import { Piece } from '@web3-storage/data-segment'
import { varint } from 'multiformats'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { writeCarFile, type CarJob } from '../../../server/gateway/content/group-car.ts'

const dir = mkdtempSync(join(tmpdir(), 'group-car-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const rawCid = (bytes: Uint8Array) => CID.create(1, 0x55, Digest.create(0x12, createHash('sha256').update(bytes).digest()))

/** A block file holding `sizes` blocks, with `gap` unused bytes between neighbours, and its CAR job. */
function blockFile(name: string, sizes: number[], gap = 0): { job: CarJob; blocks: { cid: CID; bytes: Uint8Array }[] } {
  const blocks = sizes.map((n) => randomBytes(n)).map((bytes) => ({ cid: rawCid(bytes), bytes }))
  const file: Buffer[] = []
  const placed: CarJob['blocks'] = []
  let offset = 0
  for (const b of blocks) {
    placed.push({ cid: b.cid.toString(), offset, length: b.bytes.length })
    file.push(Buffer.from(b.bytes), Buffer.alloc(gap))
    offset += b.bytes.length + gap
  }
  writeFileSync(join(dir, `${name}.blocks`), Buffer.concat(file))
  return {
    job: { groupId: 1, blocks: placed, roots: [placed[0].cid], blockPath: join(dir, `${name}.blocks`), carPath: join(dir, `${name}.car`) },
    blocks,
  }
}

/** The same CAR from @ipld/car's own streaming writer. */
async function referenceCar(roots: string[], blocks: { cid: CID; bytes: Uint8Array }[]): Promise<Buffer> {
  const { writer, out } = CarWriter.create(roots.map((r) => CID.parse(r)))
  const chunks: Uint8Array[] = []
  const collect = (async () => {
    for await (const c of out) chunks.push(c)
  })()
  for (const b of blocks) await writer.put(b)
  await writer.close()
  await collect
  return Buffer.concat(chunks)
}

describe('writing a group CAR', () => {
  it.each([
    ['many small neighbouring blocks', Array.from({ length: 3000 }, (_, i) => 100 + (i % 900)), 0],
    ['1 MiB blocks across several read batches', Array(9).fill(1 << 20), 0],
    ['blocks with gaps between them in the block file', [5000, 1 << 20, 77, 3 << 20, 1], 13],
  ])('writes %s byte for byte as @ipld/car does, with the piece CID of those bytes', async (name, sizes, gap) => {
    const { job, blocks } = blockFile(name.replaceAll(' ', '-'), sizes, gap)
    const car = await writeCarFile(job)
    const written = readFileSync(job.carPath)
    expect(written.equals(await referenceCar(job.roots, blocks))).toBe(true)
    expect(car.carSize).toBe(written.length)
    expect(car.pieceCid).toBe(Piece.fromPayload(written).toInfo().link.toString())
  })

  it('stops after the first block with it on disk in the temp CAR, and finishes the same CAR after', async () => {
    const { job, blocks } = blockFile('paused', [4096, 8192, 1 << 20])
    let tempSize = -1
    await writeCarFile(job, async () => {
      tempSize = readFileSync(`${job.carPath}.tmp`).length
    })
    // Header and first block written, nothing more.
    const reference = await referenceCar(job.roots, blocks)
    const section = (n: number) => varint.encodingLength(36 + n) + 36 + n
    const firstBlockEnd = reference.length - section(8192) - section(1 << 20)
    expect(tempSize).toBe(firstBlockEnd)
    expect(readFileSync(job.carPath).equals(reference)).toBe(true)
  })

  it('fails on a block file shorter than its index says, leaving no CAR behind', async () => {
    const { job } = blockFile('short', [1000, 2000])
    writeFileSync(job.blockPath, readFileSync(job.blockPath).subarray(0, 2500))
    await expect(writeCarFile(job)).rejects.toThrow(/shorter than its index/)
    expect(() => readFileSync(job.carPath)).toThrow()
    expect(() => readFileSync(`${job.carPath}.tmp`)).toThrow()
  })
})

import { randomBytes } from 'node:crypto'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { mountSmallDisk, tmpfsUnavailable, type SmallDisk } from '../../helpers/tmpfs.ts'
import type { StorageProviderPort } from '../../../server/gateway/deals/index.ts'
import { startDealStack, type DealStack } from './harness.ts'

let stack: DealStack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

const details = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.details

/** What the gateway asked providers for: each block (provider, CID, bytes received) and each whole piece. */
interface Asked {
  blocks: { provider: string; cid: string; bytes: number }[]
  pieces: string[]
}

/** The provider port, counting retrievals as a provider's HTTP log would. */
function counting(asked: Asked) {
  return (port: StorageProviderPort): StorageProviderPort => ({
    ...port,
    async retrieveBlock(provider, pieceCid, cid, options) {
      const bytes = await port.retrieveBlock(provider, pieceCid, cid, options)
      asked.blocks.push({ provider, cid, bytes: bytes.length })
      return bytes
    },
    retrievePiece(provider, pieceCid, carSize, options) {
      asked.pieces.push(provider)
      return port.retrievePiece(provider, pieceCid, carSize, options)
    },
  })
}

/**
 * Two files in one group (the harness closes groups at 1 MiB), placed with
 * two providers and offloaded. Imported as kubo-cid-v1 so that these small
 * files span several leaves of 256 KiB (262 144 bytes): big.bin has 3,
 * small.bin 2.
 */
async function offloadedPair(asked: Asked, gatewayDir?: string) {
  const s = (stack = await startDealStack({ copies: 2, providers: counting(asked), gatewayDir, cidProfile: 'kubo-cid-v1' }))
  const big = randomBytes(700_000)
  const small = randomBytes(300_000)
  expect((await s.put('/big.bin', big)).status).toBe(201)
  expect((await s.put('/small.bin', small)).status).toBe(201)
  await s.seal()
  expect(await s.runUntil(async () => (await details(s, '/small.bin')).state === 'offloaded')).toBe(true)
  const groupOf = async (path: string) => (await details(s, path)).groups.map((g: { groupId: number }) => g.groupId)
  expect(await groupOf('/big.bin')).toEqual(await groupOf('/small.bin'))
  expect(await groupOf('/big.bin')).toHaveLength(1)
  // Retrieval checks asked for sample blocks: only what the reads ask counts from here.
  asked.blocks.length = 0
  return { s, big, small }
}

describe('reading offloaded data', () => {
  it('fetches only the blocks of the file read, bytes intact, and the group stays offloaded throughout', async () => {
    const asked: Asked = { blocks: [], pieces: [] }
    const { s, small } = await offloadedPair(asked)

    const res = await s.get('/small.bin')
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const first = await reader.read()
    // Mid-read: not reloaded, nothing back on disk for a plain read.
    expect((await details(s, '/small.bin')).groups[0].state).toBe('offloaded')
    const rest: Uint8Array[] = [first.value!]
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(r.value)
    expect(Buffer.concat(rest).equals(small)).toBe(true)

    // Its 2 raw leaves, 300 000 bytes in all: not the other file's, not the 1 MiB group's CAR.
    expect(asked.pieces).toEqual([])
    expect(asked.blocks).toHaveLength(2)
    expect(asked.blocks.reduce((n, b) => n + b.bytes, 0)).toBe(300_000)
    expect((await details(s, '/small.bin')).groups[0].state).toBe('offloaded')
  })

  it('a range read fetches only the blocks that cover the range', async () => {
    const asked: Asked = { blocks: [], pieces: [] }
    const { s, big } = await offloadedPair(asked)
    // Bytes 300 000–300 009 lie in the second leaf (262 144–524 287).
    const part = await fetch(`${s.gatewayServer.url}/big.bin`, { headers: { Range: 'bytes=300000-300009' } })
    expect(part.status).toBe(206)
    expect(Buffer.from(await part.arrayBuffer()).equals(big.subarray(300_000, 300_010))).toBe(true)
    expect(asked.blocks.map((b) => b.bytes)).toEqual([262_144])
    expect(asked.pieces).toEqual([])
  })

  it('skips a provider that sends altered blocks: every block comes intact from the honest one', async () => {
    const asked: Asked = { blocks: [], pieces: [] }
    const { s, big } = await offloadedPair(asked)
    const [liar, honest] = (await details(s, '/big.bin')).groups[0].deals.map((d: { provider: string }) => d.provider)
    s.sim.setFault(liar, 'corrupt')
    const res = await s.get('/big.bin')
    expect(res.status).toBe(200)
    expect(Buffer.from(await res.arrayBuffer()).equals(big)).toBe(true)
    // The liar was asked (it comes first) and refused; each of the 3 leaves came from the honest provider.
    expect(asked.blocks.some((b) => b.provider === liar)).toBe(true)
    expect(asked.blocks.filter((b) => b.provider === honest)).toHaveLength(3)
    expect(asked.pieces).toEqual([])
    expect((await details(s, '/big.bin')).groups[0].state).toBe('offloaded')
  })

  it('no provider can send the data: a clean 503 CONTENT_UNAVAILABLE before any byte, the group still offloaded', async () => {
    const asked: Asked = { blocks: [], pieces: [] }
    const { s } = await offloadedPair(asked)
    for (const d of (await details(s, '/small.bin')).groups[0].deals) s.sim.setFault(d.provider, 'corrupt')
    const res = await s.get('/small.bin')
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('60')
    expect(await res.text()).toContain('CONTENT_UNAVAILABLE')
    expect(asked.pieces).toEqual([])
    expect((await details(s, '/small.bin')).groups[0].state).toBe('offloaded')
  })
})

describe.skipIf(tmpfsUnavailable)(
  `reading offloaded data with the gateway's disk full${tmpfsUnavailable ? ` (skipped: ${tmpfsUnavailable})` : ''}`,
  () => {
    let disk: SmallDisk | undefined
    afterAll(() => {
      disk?.free()
      disk?.unmount()
    })

    it('streams an offloaded file from its providers byte for byte: a read needs no room on the disk', async () => {
      disk = mountSmallDisk(48 * 1024 * 1024)
      const { s, big } = await offloadedPair({ blocks: [], pieces: [] }, disk.dir)
      disk.fill()
      const res = await s.get('/big.bin')
      expect(res.status).toBe(200)
      expect(Buffer.from(await res.arrayBuffer()).equals(big)).toBe(true)
      expect((await details(s, '/big.bin')).groups[0].state).toBe('offloaded')
      await s.close()
      stack = undefined
    })
  },
)

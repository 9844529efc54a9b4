import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createPublicClient, http } from 'viem'
import { afterEach, describe, expect, it } from 'vitest'
import { keptClock, readChainClock, viemBlocks, type BlockSource } from '../../../server/network/foc/chain-clock.ts'
import { startEvmNode, type EvmNode } from '../../../server/simulation/simfoc/evm-node.ts'

const CALIBRATION_GENESIS = 1667326380

/** A Filecoin chain's blocks as Lotus serves them: tipset h at genesis + 30 s × h; a null round's height and refused heights throw. */
function lotusBlocks(o: { head: number; nullRounds?: number[]; servedFrom?: number; asked?: bigint[] }): BlockSource {
  return async (at) => {
    const height = at === 'latest' ? BigInt(o.head) : at
    o.asked?.push(height)
    if (height < BigInt(o.servedFrom ?? 0)) throw new Error('bad tipset height: lookbacks of more than 24h0m0s are disallowed')
    if (o.nullRounds?.includes(Number(height))) throw new Error('requested epoch was a null round')
    return { number: height, timestamp: BigInt(CALIBRATION_GENESIS) + height * 30n }
  }
}

describe("the Onchain Cloud chain's clock, read from its blocks", () => {
  it('is genesis + 30 s × epoch on a Filecoin node that serves block 0', async () => {
    expect(await readChainClock(lotusBlocks({ head: 3_300_000 }))).toEqual({ genesis: CALIBRATION_GENESIS, epochSeconds: 30 })
  })

  it("is the same from a public node that serves no old block, stepping over a null round's height", async () => {
    const asked: bigint[] = []
    // Block 0 refused (a gateway's lookback cap), then the block 1 000 back a null round, and the next one served.
    const blocks = lotusBlocks({ head: 3_300_000, servedFrom: 3_290_000, nullRounds: [3_299_000], asked })
    expect(await readChainClock(blocks)).toEqual({ genesis: CALIBRATION_GENESIS, epochSeconds: 30 })
    expect(asked).toEqual([3_300_000n, 0n, 3_299_000n, 3_299_001n])
  })

  it('says why when no second block can be read, or the chain has none after its first yet', async () => {
    const nulls = Array.from({ length: 10 }, (_, i) => 3_299_000 + i)
    await expect(readChainClock(lotusBlocks({ head: 3_300_000, servedFrom: 3_200_000, nullRounds: nulls }))).rejects.toThrow(
      /serves neither block 0 nor any of the 10 blocks from 3299000: its clock cannot be read/,
    )
    await expect(readChainClock(lotusBlocks({ head: 0 }))).rejects.toThrow(/no block after epoch 0 yet/)
    // Blocks are stamped to the second: a sped-up chain a few seconds old cannot tell its epoch to the second.
    await expect(
      readChainClock(async (at) => ({ number: at === 'latest' ? 40n : at, timestamp: 1_700_000_000n + (at === 'latest' ? 2n : 0n) })),
    ).rejects.toThrow(/blocks 0 and 40 are 2 s apart, too close to tell its clock by/)
  })

  describe('on a simulated FEVM chain (its own clock, sped up)', () => {
    let node: EvmNode | undefined
    afterEach(async () => {
      await node?.close()
      node = undefined
    })

    it('is the clock its blocks are stamped with, to the second they are floored to', async () => {
      // Half-second epochs from an instant 10 000 s ago: epoch e's block is stamped genesis + e / 2, floored to the second.
      const genesis = Math.floor(Date.now() / 1000) - 10_000
      node = await startEvmNode({ genesisTimestamp: genesis, epochSeconds: 0.5 })
      const client = createPublicClient({ transport: http(node.url) })
      const clock = await readChainClock(viemBlocks(client))
      expect(clock.genesis).toBe(genesis)
      // Read from block 0 and the head, 20 000 epochs apart: the head's floored second is all it can be off by.
      expect(Math.abs(clock.epochSeconds - 0.5)).toBeLessThanOrEqual(1 / 20_000)
      for (const epoch of [0, 1, 4_320, 4_321, node.headEpoch()]) {
        const block = await client.getBlock({ blockNumber: BigInt(epoch) })
        expect(Math.abs(clock.genesis + epoch * clock.epochSeconds - Number(block.timestamp))).toBeLessThanOrEqual(1)
      }
    })
  })
})

describe("the Onchain Cloud client's kept clock against a Lotus-like FEVM node", () => {
  let server: Server | undefined
  afterEach(async () => {
    await new Promise((r) => server?.close(r))
    server = undefined
  })

  /** A node answering eth_blockNumber and eth_getBlockByNumber as Lotus does, refusing block 0 and a null round. */
  async function lotusNode(o: { head: number; down?: () => boolean }): Promise<{ url: string; asked: string[] }> {
    const asked: string[] = []
    server = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        const call = JSON.parse(body) as { id: number; method: string; params: unknown[] }
        const reply = (x: object) =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...x }))
        asked.push(call.method)
        if (o.down?.()) return reply({ error: { code: -32603, message: 'node syncing' } })
        if (call.method === 'eth_blockNumber') return reply({ result: `0x${o.head.toString(16)}` })
        if (call.method !== 'eth_getBlockByNumber') return reply({ error: { code: -32601, message: 'method not found' } })
        const tag = call.params[0] as string
        const height = tag === 'latest' ? o.head : Number(BigInt(tag))
        if (height === 0) return reply({ error: { code: 1, message: 'bad tipset height: lookbacks of more than 24h0m0s are disallowed' } })
        if (height === o.head - 1000) return reply({ error: { code: 12, message: 'requested epoch was a null round' } })
        reply({ result: ethBlock(height, CALIBRATION_GENESIS + height * 30) })
      })
    })
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
    return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}/rpc/v1`, asked }
  }

  it('reads the clock once and keeps it; a node that did not answer is asked again next time', async () => {
    let down = true
    const node = await lotusNode({ head: 3_300_000, down: () => down })
    const clock = keptClock(() => readChainClock(viemBlocks(createPublicClient({ transport: http(node.url, { retryCount: 0 }) }))))
    await expect(clock()).rejects.toThrow(/node syncing/)
    down = false
    expect(await clock()).toEqual({ genesis: CALIBRATION_GENESIS, epochSeconds: 30 })
    const blocksRead = node.asked.filter((m) => m === 'eth_getBlockByNumber').length
    expect(await clock()).toEqual({ genesis: CALIBRATION_GENESIS, epochSeconds: 30 })
    expect(node.asked.filter((m) => m === 'eth_getBlockByNumber').length).toBe(blocksRead)
  })
})

/** An FEVM block as Lotus's eth API answers it, with what viem reads. */
function ethBlock(height: number, timestamp: number) {
  const hex = (n: number) => `0x${n.toString(16)}`
  const hash = `0x${height.toString(16).padStart(64, '0')}`
  return {
    number: hex(height),
    hash,
    parentHash: `0x${'0'.repeat(64)}`,
    timestamp: hex(timestamp),
    nonce: '0x0000000000000000',
    sha3Uncles: `0x${'0'.repeat(64)}`,
    logsBloom: `0x${'0'.repeat(512)}`,
    transactionsRoot: `0x${'0'.repeat(64)}`,
    stateRoot: `0x${'0'.repeat(64)}`,
    receiptsRoot: `0x${'0'.repeat(64)}`,
    miner: `0x${'0'.repeat(40)}`,
    difficulty: '0x0',
    totalDifficulty: '0x0',
    extraData: '0x',
    size: '0x0',
    gasLimit: '0x2540be400',
    gasUsed: '0x0',
    baseFeePerGas: '0x64',
    transactions: [],
    uncles: [],
  }
}

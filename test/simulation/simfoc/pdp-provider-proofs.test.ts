import { devnet } from '@filoz/synapse-core/chains'
import * as Piece from '@filoz/synapse-core/piece'
import * as SP from '@filoz/synapse-core/sp'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { Fr32, Tree } from '@web3-storage/data-segment'
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bytesToHex, createWalletClient, hexToBytes, http, type Address, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PossessionProof } from '../../../server/simulation/simfoc/pdp-provider-chain.ts'
import { commP, paddingOf, pieceCidV2, proveLeaf, leafCountOf } from '../../../server/simulation/simfoc/pdp-provider-piece.ts'
import { challengeIndexes } from '../../../server/simulation/simfoc/pdp-provider-tasks.ts'
import { createPdpProvider, type PdpProvider } from '../../../server/simulation/simfoc/pdp-provider.ts'
import { FakePdpChain } from './pdp-provider-fake-chain.ts'

/**
 * The simulated Curio's commitments and proofs, checked against trees built
 * here with another implementation (@web3-storage/data-segment's FR32 and
 * piece tree), and its proving loop on a recording chain.
 */

function bytes(size: number, seed: string): Uint8Array {
  const out = new Uint8Array(size)
  for (let i = 0, n = 0; i < size; n++, i += 32)
    out.set(
      createHash('sha256')
        .update(`${seed}/${n}`)
        .digest()
        .subarray(0, Math.min(32, size - i)),
      i,
    )
  return out
}

/** The whole tree of a payload, built independently: nodes[0] is the root level, nodes[height] the leaves. */
function independentTree(data: Uint8Array): Uint8Array[][] {
  return (Tree.build(Fr32.pad(data)) as unknown as { nodes: Uint8Array[][] }).nodes
}

/** Siblings from the leaf up, read off the independent tree. */
function expectedPath(nodes: Uint8Array[][], leaf: number): { leaf: Uint8Array; path: Uint8Array[] } {
  const height = nodes.length - 1
  const path: Uint8Array[] = []
  for (let level = 0; level < height; level++) path.push(nodes[height - level][(leaf >> level) ^ 1])
  return { leaf: nodes[height][leaf], path }
}

describe('simulated Curio: CommP and Merkle proofs', () => {
  it('computes the piece CID the SDK computes, across batch boundaries', () => {
    const batch = (1 << 14) * 127
    for (const size of [127, 128, 254, 1000, 65_024, 65_025, batch - 1, batch, batch + 1, 2 * batch + 3000]) {
      const data = bytes(size, `size-${size}`)
      const mine = commP(data)
      expect(pieceCidV2(mine.root, mine.rawSize, mine.height).toString(), `size ${size}`).toBe(Piece.calculate(data).toString())
    }
  })

  it('builds proofs whose leaf and siblings are those of an independently built tree', async () => {
    for (const size of [127, 3000, 200_000, 1_500_000]) {
      const data = bytes(size, `proof-${size}`)
      const piece = commP(data)
      const nodes = independentTree(data)
      expect(bytesToHex(nodes[0][0])).toBe(bytesToHex(piece.root))
      const leaves = leafCountOf(paddingOf(size, piece.height), piece.height)
      const picks = new Set(
        [0, 1, 2, 3, 1023, 1024, 1025, Math.floor(leaves / 3), leaves - 2, leaves - 1].filter((n) => n >= 0 && n < leaves),
      )
      for (const leaf of picks) {
        const proof = await proveLeaf(async (offset, length) => data.subarray(offset, offset + length), piece, leaf)
        const expected = expectedPath(nodes, leaf)
        expect(bytesToHex(proof.leaf), `size ${size} leaf ${leaf}`).toBe(bytesToHex(expected.leaf))
        expect(
          proof.proof.map((n) => bytesToHex(n)),
          `size ${size} leaf ${leaf}`,
        ).toEqual(expected.path.map((n) => bytesToHex(n)))
      }
    }
  })

  it('refuses to prove from bytes that are no longer the piece', async () => {
    const data = bytes(5000, 'changed')
    const piece = commP(data)
    const changed = data.slice()
    changed[100] ^= 1
    await expect(proveLeaf(async (o, l) => changed.subarray(o, o + l), piece, 3)).rejects.toThrow(
      'piece data does not match its commitment',
    )
  })

  it('draws challenges as PDPVerifier does: keccak256(seed ‖ setId ‖ uint64 index) mod leaves', () => {
    const seed = 0x1234567890abcdefn * 2n ** 190n + 77n
    const setId = 5n
    const leaves = 12_345n
    const mine = challengeIndexes(seed, setId, leaves)
    const expected = [0, 1, 2, 3, 4].map((i) => {
      const payload = new Uint8Array(72)
      payload.set(hexToBytes(`0x${seed.toString(16).padStart(64, '0')}`), 0)
      payload.set(hexToBytes(`0x${setId.toString(16).padStart(64, '0')}`), 32)
      new DataView(payload.buffer).setBigUint64(64, BigInt(i))
      return BigInt(bytesToHex(keccak_256(payload))) % leaves
    })
    expect(mine).toEqual(expected)
  })
})

const FWSS: Address = '0x00000000000000000000000000000000000f1055'
const client = createWalletClient({
  account: privateKeyToAccount('0x2222222222222222222222222222222222222222222222222222222222222222'),
  chain: { ...devnet, contracts: { ...devnet.contracts, fwss: { ...devnet.contracts.fwss, address: FWSS } } },
  transport: http('http://127.0.0.1:9/unused'),
})

describe('simulated Curio: the proving loop', () => {
  let dir: string
  let chain: FakePdpChain
  let provider: PdpProvider
  let url: string
  const payloads: Uint8Array[] = [bytes(40_000, 'first'), bytes(130_000, 'second')]

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pdp-proofs-'))
    chain = new FakePdpChain()
    provider = await createPdpProvider({ dir, chain, recordKeepers: [FWSS], pollMs: 0 })
    url = await provider.listen()
  })

  afterEach(async () => {
    await provider.close()
    await rm(dir, { recursive: true, force: true })
  })

  async function advanceTo(epoch: number): Promise<void> {
    while (chain.head < epoch) {
      chain.advance()
      await provider.tick()
    }
  }

  /** Two pieces in a new data set, landed. */
  async function dataSetWithTwoPieces(): Promise<void> {
    const pieces = []
    for (const data of payloads) pieces.push({ pieceCid: (await SP.uploadPieceStreaming({ serviceURL: url, data })).pieceCid })
    const created = await SP.createDataSetAndAddPieces(client, { serviceURL: url, payee: chain.address, pieces })
    await advanceTo(chain.head + 2)
    await SP.waitForCreateDataSetAddPieces({ statusUrl: created.statusUrl })
  }

  /** Checks a sent proof against the independent trees: the challenged leaves, their pieces and paths. */
  async function checkProof(call: { args: unknown[] }, challengeEpoch: number): Promise<void> {
    const [setId, proofs] = call.args as [bigint, PossessionProof[]]
    const set = chain.dataSets.get(Number(setId))!
    const seed = await chain.randomness(BigInt(challengeEpoch))
    expect(proofs).toHaveLength(5)
    const live = set.pieces.filter((p) => p.live)
    for (let i = 0; i < proofs.length; i++) {
      const payload = new Uint8Array(72)
      payload.set(hexToBytes(`0x${seed.toString(16).padStart(64, '0')}`), 0)
      payload.set(hexToBytes(`0x${setId.toString(16).padStart(64, '0')}`), 32)
      new DataView(payload.buffer).setBigUint64(64, BigInt(i))
      let leaf = Number(BigInt(bytesToHex(keccak_256(payload))) % BigInt(set.challengeRange))
      const piece = live.find((p) => (leaf < p.leafCount ? true : ((leaf -= p.leafCount), false)))!
      const expected = expectedPath(independentTree(payloads[piece.id]), leaf)
      expect(proofs[i].leaf).toBe(bytesToHex(expected.leaf))
      expect(proofs[i].proof).toEqual(expected.path.map((n) => bytesToHex(n) as Hex))
    }
  }

  it('starts proving once pieces land, proves each challenge window from the stored bytes, and moves the proving period', async () => {
    await dataSetWithTwoPieces()
    // Init: nextProvingPeriod(set, initChallengeWindowStart + window/2) (task_init_pp.go).
    await advanceTo(chain.head + 1)
    const [init] = chain.callsNamed('nextProvingPeriod')
    const expectedStart =
      init.epoch + Number(chain.config.maxProvingPeriod - chain.config.challengeWindow) + Number(chain.config.challengeWindow) / 2
    expect(init.args).toEqual([1n, BigInt(expectedStart), '0x'])
    const dataSet = await SP.getDataSet({ serviceURL: url, dataSetId: 1n })
    expect(dataSet.nextChallengeEpoch).toBe(expectedStart)

    // Nothing before the challenge epoch; the proof comes once the head passes it (by one block, against reorgs).
    await advanceTo(expectedStart + 1)
    expect(chain.callsNamed('provePossession')).toHaveLength(0)
    await advanceTo(expectedStart + 2)
    const [first] = chain.callsNamed('provePossession')
    expect(first.value).toBe(3000n)
    await checkProof(first, expectedStart)
    expect(provider.proofs()).toEqual([
      { dataSetId: 1, challengeEpoch: expectedStart, sentAtEpoch: expectedStart + 2, txHash: first.hash!.toLowerCase() },
    ])

    // After the window: the next period (task_next_pp.go), then its proof.
    const windowEnd = expectedStart + Number(chain.config.challengeWindow)
    await advanceTo(windowEnd)
    const next = chain.callsNamed('nextProvingPeriod')[1]
    expect(next.epoch).toBe(windowEnd)
    const nextEpoch = Number(next.args[1])
    expect(nextEpoch).toBe(windowEnd + Number(chain.config.maxProvingPeriod - chain.config.challengeWindow))
    await advanceTo(nextEpoch + 2)
    const second = chain.callsNamed('provePossession')[1]
    await checkProof(second, nextEpoch)
  })

  it('keeps proving after a restart, from its saved database', async () => {
    await dataSetWithTwoPieces()
    await advanceTo(chain.head + 1)
    const proveAt = Number(chain.callsNamed('nextProvingPeriod')[0].args[1])
    await provider.close()
    provider = await createPdpProvider({ dir, chain, recordKeepers: [FWSS], pollMs: 0 })
    url = await provider.listen()
    await advanceTo(proveAt + 2)
    const [proof] = chain.callsNamed('provePossession')
    await checkProof(proof, proveAt)
  })

  it('stop-proving: the periods move on but no proof is sent; proving resumes when the fault is lifted', async () => {
    await provider.setFault('stop-proving')
    await dataSetWithTwoPieces()
    await advanceTo(chain.head + 1)
    const proveAt = Number(chain.callsNamed('nextProvingPeriod')[0].args[1])
    await advanceTo(proveAt + Number(chain.config.challengeWindow) + 1)
    expect(chain.callsNamed('provePossession')).toHaveLength(0)
    expect(chain.callsNamed('nextProvingPeriod')).toHaveLength(2)
    await provider.setFault(null)
    const nextAt = Number(chain.callsNamed('nextProvingPeriod')[1].args[1])
    await advanceTo(nextAt + 2)
    await checkProof(chain.callsNamed('provePossession')[0], nextAt)
  })

  it('lose: without the bytes no proof can be built, so none is sent', async () => {
    await dataSetWithTwoPieces()
    await provider.setFault('lose')
    await advanceTo(chain.head + 1)
    const proveAt = Number(chain.callsNamed('nextProvingPeriod')[0].args[1])
    await advanceTo(proveAt + 5)
    expect(chain.callsNamed('provePossession')).toHaveLength(0)
  })

  it('removes a deleted piece at the next proving period and then proves only the rest', async () => {
    await dataSetWithTwoPieces()
    const proveAt = Number(chain.callsNamed('nextProvingPeriod')[0].args[1])
    await SP.schedulePieceDeletion(client, { serviceURL: url, dataSetId: 1n, pieceId: 0n, clientDataSetId: 1n })
    await advanceTo(proveAt + 2)
    await checkProof(chain.callsNamed('provePossession')[0], proveAt)
    expect((await SP.getDataSet({ serviceURL: url, dataSetId: 1n })).pieces.map((p) => p.pieceId)).toEqual([0n, 1n])
    // nextProvingPeriod applies scheduled removals; Curio marks the piece removed once that message is confirmed.
    const windowEnd = proveAt + Number(chain.config.challengeWindow)
    await advanceTo(windowEnd + 2)
    expect((await SP.getDataSet({ serviceURL: url, dataSetId: 1n })).pieces.map((p) => p.pieceId)).toEqual([1n])
    const nextAt = Number(chain.callsNamed('nextProvingPeriod')[1].args[1])
    await advanceTo(nextAt + 2)
    await checkProof(chain.callsNamed('provePossession')[1], nextAt)
  })

  it('gives a data set up after challenge requests keep failing, and then refuses to add to it', async () => {
    chain.refuse.set('nextProvingPeriod', 'execution reverted: DataSetNotLive')
    await dataSetWithTwoPieces()
    await advanceTo(chain.head + 10)
    expect(provider.dataSets()[0].unrecoverableEpoch).not.toBeNull()
    const { pieceCid } = await SP.uploadPieceStreaming({ serviceURL: url, data: bytes(1000, 'late') })
    await expect(SP.addPieces(client, { serviceURL: url, dataSetId: 1n, clientDataSetId: 1n, pieces: [{ pieceCid }] })).rejects.toThrow(
      'data set has been terminated due to unrecoverable proving failure',
    )
  })
})

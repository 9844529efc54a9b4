import { CID } from 'multiformats/cid'
import { varint } from 'multiformats'
import { encodePacked, keccak256, toHex, type Address, type Hex } from 'viem'
import {
  ChainSendError,
  type PdpChain,
  type PossessionProof,
  type ProvingConfig,
  type ReceiptSummary,
} from '../../../server/simulation/simfoc/pdp-provider-chain.ts'

/** FilOzone/pdp 3.4.0 src/Fees.sol CLEANUP_DEPOSIT: 0.1 FIL. */
export const CLEANUP_DEPOSIT = 100_000_000_000_000_000n

/**
 * A chain port for the simulated Curio's tests until the stand-in contracts
 * run: it records every call, keeps a tiny PDPVerifier state (data sets,
 * pieces with their leaf counts, challenge epochs) and mines a message into
 * the block after the head. Test code, not a contract: enough for the
 * provider's side to be checked.
 */

export interface RecordedCall {
  name: string
  args: unknown[]
  value?: bigint
  hash?: Hex
  epoch: number
}

interface FakePiece {
  id: number
  cid: Hex
  leafCount: number
  live: boolean
}

interface FakeDataSet {
  id: number
  listener: Address
  pieces: FakePiece[]
  challengeRange: number
  nextChallengeEpoch: number
  deadline: number
  scheduledRemovals: number[]
}

/** Leaves a PieceCIDv2 names (FRC-0069 digest: padding, height, root). */
export function leafCountOfCid(bytes: Hex): number {
  const cid = CID.decode(Buffer.from(bytes.slice(2), 'hex'))
  const digest = cid.multihash.digest
  const [padding, read] = varint.decode(digest)
  const height = digest[read]
  return 2 ** height - Math.floor(Math.floor((128 * padding) / 127) / 32)
}

export class FakePdpChain implements PdpChain {
  readonly address: Address = '0x00000000000000000000000000000000000c0210'
  head = 1000
  readonly calls: RecordedCall[] = []
  readonly dataSets = new Map<number, FakeDataSet>()
  private readonly receipts = new Map<string, ReceiptSummary>()
  private nextDataSetId = 1
  private nonce = 0
  /** The next send fails with this text (as a reverting gas estimate would). */
  failNextSend: string | null = null
  /** Every send of these functions fails with the given text. */
  readonly refuse = new Map<string, string>()
  config = { maxProvingPeriod: 60n, challengeWindow: 20n, challengesPerProof: 5n }
  challengeFinality = 2

  /** Mines `n` blocks. */
  advance(n = 1): void {
    this.head += n
  }

  private record(name: string, args: unknown[], value?: bigint): Hex {
    const refused = this.refuse.get(name)
    if (refused) throw new ChainSendError(refused)
    if (this.failNextSend) {
      const text = this.failNextSend
      this.failNextSend = null
      throw new ChainSendError(text)
    }
    const hash = keccak256(toHex(`${name}/${this.nonce++}`))
    this.calls.push({ name, args, value, hash, epoch: this.head })
    return hash
  }

  private land(hash: Hex, summary: Omit<ReceiptSummary, 'blockNumber'>): void {
    this.receipts.set(hash.toLowerCase(), { ...summary, blockNumber: this.head + 1 })
  }

  private addTo(set: FakeDataSet, pieces: Hex[]): number[] {
    return pieces.map((cid) => {
      const piece = { id: set.pieces.length, cid, leafCount: leafCountOfCid(cid), live: true }
      set.pieces.push(piece)
      return piece.id
    })
  }

  async headEpoch(): Promise<number> {
    return this.head
  }

  async createDataSet(listener: Address, extraData: Hex, value: bigint): Promise<Hex> {
    this.requireDeposit(value)
    const hash = this.record('createDataSet', [listener, extraData], value)
    const id = this.nextDataSetId++
    this.dataSets.set(id, { id, listener, pieces: [], challengeRange: 0, nextChallengeEpoch: 0, deadline: 0, scheduledRemovals: [] })
    this.land(hash, { success: true, dataSetId: BigInt(id) })
    return hash
  }

  async addPieces(setId: bigint, listener: Address, pieces: Hex[], extraData: Hex, value: bigint): Promise<Hex> {
    if (setId === 0n) this.requireDeposit(value)
    const hash = this.record('addPieces', [setId, listener, pieces, extraData], value)
    if (setId === 0n) {
      const id = this.nextDataSetId++
      const set: FakeDataSet = { id, listener, pieces: [], challengeRange: 0, nextChallengeEpoch: 0, deadline: 0, scheduledRemovals: [] }
      this.dataSets.set(id, set)
      this.land(hash, { success: true, dataSetId: BigInt(id), pieceIds: this.addTo(set, pieces).map(BigInt) })
    } else {
      const set = this.dataSets.get(Number(setId))
      if (!set) this.land(hash, { success: false })
      else this.land(hash, { success: true, pieceIds: this.addTo(set, pieces).map(BigInt) })
    }
    return hash
  }

  async nextProvingPeriod(setId: bigint, challengeEpoch: bigint, extraData: Hex): Promise<Hex> {
    const hash = this.record('nextProvingPeriod', [setId, challengeEpoch, extraData])
    const set = this.dataSets.get(Number(setId))!
    if (Number(challengeEpoch) < this.head + this.challengeFinality) {
      this.land(hash, { success: false })
      return hash
    }
    for (const id of set.scheduledRemovals) set.pieces[id].live = false
    set.scheduledRemovals = []
    set.challengeRange = set.pieces.filter((p) => p.live).reduce((n, p) => n + p.leafCount, 0)
    set.nextChallengeEpoch = Number(challengeEpoch)
    set.deadline = Number(challengeEpoch) + Number(this.config.challengeWindow)
    this.land(hash, { success: true })
    return hash
  }

  async provePossession(setId: bigint, proofs: PossessionProof[], value: bigint): Promise<Hex> {
    const hash = this.record('provePossession', [setId, proofs], value)
    this.land(hash, { success: true })
    return hash
  }

  async schedulePieceDeletions(setId: bigint, pieceIds: bigint[], extraData: Hex): Promise<Hex> {
    const hash = this.record('schedulePieceDeletions', [setId, pieceIds, extraData])
    this.dataSets.get(Number(setId))?.scheduledRemovals.push(...pieceIds.map(Number))
    this.land(hash, { success: true })
    return hash
  }

  async validateAddPieces(setId: bigint, listener: Address, pieces: Hex[], extraData: Hex, value: bigint): Promise<void> {
    this.calls.push({ name: 'validateAddPieces(eth_call)', args: [setId, listener, pieces, extraData], value, epoch: this.head })
    if (setId === 0n) this.requireDeposit(value)
    if (this.failNextSend) {
      const text = this.failNextSend
      this.failNextSend = null
      throw new ChainSendError(text)
    }
  }

  async receipt(hash: Hex): Promise<ReceiptSummary | null> {
    const receipt = this.receipts.get(hash.toLowerCase())
    return receipt && receipt.blockNumber <= this.head ? receipt : null
  }

  /** PDPVerifier 3.4.0's FIL_CLEANUP_DEPOSIT (src/Fees.sol: 0.1 FIL). */
  async cleanupDeposit(): Promise<bigint> {
    return CLEANUP_DEPOSIT
  }

  /** As the real verifier's estimate reverts on a creation without the deposit. */
  private requireDeposit(value: bigint): void {
    if (value < CLEANUP_DEPOSIT) throw new ChainSendError('execution reverted: CleanupDepositRequired()')
  }

  async dataSetListener(setId: bigint): Promise<Address> {
    return this.dataSets.get(Number(setId))!.listener
  }

  async dataSetLeafCount(setId: bigint): Promise<bigint> {
    return BigInt(
      this.dataSets
        .get(Number(setId))!
        .pieces.filter((p) => p.live)
        .reduce((n, p) => n + p.leafCount, 0),
    )
  }

  /** As FWSS's view: the first window opens one proving period from now, less a window. */
  async provingConfig(): Promise<ProvingConfig> {
    return { ...this.config, initChallengeWindowStart: BigInt(this.head) + this.config.maxProvingPeriod - this.config.challengeWindow }
  }

  async nextChallengeWindowStart(_listener: Address, setId: bigint): Promise<bigint> {
    const set = this.dataSets.get(Number(setId))!
    return BigInt(set.deadline + Number(this.config.maxProvingPeriod) - Number(this.config.challengeWindow))
  }

  async nextChallengeEpoch(setId: bigint): Promise<bigint> {
    return BigInt(this.dataSets.get(Number(setId))!.nextChallengeEpoch)
  }

  async challengeRange(setId: bigint): Promise<bigint> {
    return BigInt(this.dataSets.get(Number(setId))!.challengeRange)
  }

  /** A beacon: the hash of the epoch. */
  async randomness(epoch: bigint): Promise<bigint> {
    return BigInt(keccak256(encodePacked(['string', 'uint256'], ['beacon', epoch])))
  }

  /** The piece holding each leaf: a running sum over live pieces' leaf counts. */
  async findPieceIds(setId: bigint, leafIndexes: bigint[]): Promise<{ pieceId: bigint; offset: bigint }[]> {
    const set = this.dataSets.get(Number(setId))!
    return leafIndexes.map((index) => {
      let left = Number(index)
      for (const piece of set.pieces) {
        if (!piece.live) continue
        if (left < piece.leafCount) return { pieceId: BigInt(piece.id), offset: BigInt(left) }
        left -= piece.leafCount
      }
      throw new Error('Leaf index out of bounds')
    })
  }

  async proofFee(): Promise<bigint> {
    return 1000n
  }

  async pieceLive(setId: bigint, pieceId: bigint): Promise<boolean> {
    return this.dataSets.get(Number(setId))?.pieces[Number(pieceId)]?.live ?? false
  }

  callsNamed(name: string): RecordedCall[] {
    return this.calls.filter((c) => c.name === name)
  }
}

import type { Chain } from '@filoz/synapse-core/chains'
import type { Address, Hash } from 'viem'
import { NetworkError, timedOut } from '../../../../server/network/errors.ts'
import type { ChainClock } from '../../../../server/shared/epochs.ts'
import {
  FocFundsError,
  type FocAccount,
  type FocAddOutcome,
  type FocClient,
  type FocCopy,
  type FocCopyProof,
  type FocDataSet,
  type FocDeployment,
  type FocFunding,
  type FocFundingRequest,
  type FocStored,
  type FocStoreOptions,
} from '../../../../server/network/foc/client.ts'

/** One piece in a data set, as the fake chain keeps it. */
interface Piece {
  providerId: number
  dataSetId: bigint
  pieceId: bigint
  pieceCid: string
  addedEpoch: number
  /** Epochs at which a proof covering the piece was accepted. */
  proofs: number[]
  state: 'live' | 'scheduled' | 'gone'
}

/** What the next `store` does on one provider: a stall counts only on the primary, which takes the upload. */
export type ProviderPlan =
  'ok' | { refuse: string } | 'stall' | 'hang-after-add' | 'chain-down-at-add' | 'hang-before-add' | 'hang-in-flight'

/**
 * The plans that leave the SDK waiting at one step of an add, as a process
 * killed there leaves it: the provider holds the piece and no add was sent
 * (`hang-before-add`), the add went through but its answer never came back
 * (`hang-in-flight`), or the answer came and the SDK waits for the receipt
 * (`hang-after-add`).
 */
export const ADD_STEPS = ['hang-before-add', 'hang-in-flight', 'hang-after-add'] as const

/**
 * The gateway's Onchain Cloud port (FocClient) without a chain: data sets,
 * pieces, proofs, funds and add transactions kept in memory and moved by
 * the test, answering with the shapes `createFocClient` gives against the
 * simulated Onchain Cloud (test/network/foc/client.test.ts checks those on
 * the real SDK): epochs as numbers, amounts as 18-decimal bigints, ids as
 * bigints, the SDK's store events in its order (uploaded, stored, adding,
 * added). Proving terms are calibration's by default (FWSS getPDPConfig: a
 * 240-epoch proving period, a 20-epoch challenge window); mainnet's are 2880 and 60.
 */
export class FakeFoc implements FocClient {
  readonly address: Address = '0x00000000000000000000000000000000000000aa'
  readonly chain = { id: 314159, name: 'fake Onchain Cloud' } as unknown as Chain
  deployment(): FocDeployment {
    const at = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`
    const contracts = { fwss: at(1), fwssView: at(2), pdp: at(3), filecoinPay: at(4), usdfc: at(5) }
    const others = { serviceProviderRegistry: at(6), sessionKeyRegistry: at(7), multicall3: at(8), endorsements: at(9) }
    return { chainId: 314159, contracts: { ...contracts, ...others }, versions: { fwss: '1.3.1', pdpVerifier: '3.4.0' } }
  }
  epoch = 1_000
  /** Its clock: 30 s epochs, epoch 1 000 on 2026-11-27 (the harness's gateway clock then). */
  clock: ChainClock = { genesis: Date.UTC(2026, 10, 27) / 1000 - 1_000 * 30, epochSeconds: 30 }
  maxProvingPeriod = 240
  challengeWindow = 20
  /** Registry ids in the order the SDK would pick them. */
  providers = [1, 2, 3]
  plans = new Map<number, ProviderPlan>()
  pieces: Piece[] = []
  /** Data set per provider, created on the first copy there. */
  dataSets = new Map<number, bigint>()
  /** The epoch each data set's proving started: its creation (the provider starts proving with its first piece). */
  provingSince = new Map<bigint, number>()
  /** Add transactions sent, and what they did. */
  adds = new Map<Hash, { providerId: number; pieceCid: string; outcome: 'added' | 'reverted' | 'pending' }>()
  /** What `funding` answers. */
  fundingAnswer: FocFunding = { ready: true, depositNeeded: 0n, needsApproval: false, ratePerEpoch: 0n }
  walletUsdfc = 10n ** 21n
  deposits: bigint[] = []
  account_: Omit<FocAccount, 'epoch'> = {
    walletUsdfc: 10n ** 21n,
    walletFil: 10n ** 20n,
    funds: 10n ** 19n,
    availableFunds: 10n ** 19n,
    lockupRatePerEpoch: 10n ** 12n,
    runwayEpochs: 10_000_000n,
  }
  /** Every store asked for, and every removal sent. */
  stores: { copies: number; exclude: number[] }[] = []
  /** Bytes each store was handed, and the piece CID it was told. */
  uploads: { size: number; pieceCid: string }[] = []
  removals: { dataSetId: bigint; pieceId: bigint }[] = []
  /** Data sets whose payments the payer ended (FWSS terminateService), in order. */
  terminations: bigint[] = []
  /** Removals that fail before one goes through; calls to the chain that fail (an RPC outage). */
  failRemovals = 0
  chainDown = false
  private nextDataSet = 1n
  private nextTx = 1

  /** What each `funding` call was asked: the bytes and the copies. */
  fundingAsked: { bytes: number; request: FocFundingRequest | undefined }[] = []

  async chainClock(): Promise<ChainClock> {
    return this.clock
  }

  async chainHead(): Promise<number> {
    return this.epoch
  }

  async funding(bytes: number, request?: FocFundingRequest): Promise<FocFunding> {
    this.rpc()
    this.fundingAsked.push({ bytes, request })
    return this.fundingAnswer
  }

  async clientDataSets(): Promise<FocDataSet[]> {
    this.rpc()
    return [...this.dataSets].map(([providerId, dataSetId]) => ({
      dataSetId,
      providerId,
      clientDataSetId: dataSetId,
      pdpRailId: dataSetId,
      pdpEndEpoch: 0n,
      payer: this.address,
      serviceProvider: '0x00000000000000000000000000000000000000bb',
      pendingFees: 0n,
      lifecycleReserve: 10n ** 17n,
      live: true,
      managed: true,
      leafCount: 0n,
      activePieceCount: 0n,
      metadata: {},
    }))
  }

  async fund(amount: bigint): Promise<Hash> {
    this.rpc()
    if (amount > this.walletUsdfc)
      throw new FocFundsError(`the wallet ${this.address} holds ${this.walletUsdfc} USDFC; ${amount} is to be deposited`)
    this.walletUsdfc -= amount
    this.deposits.push(amount)
    this.fundingAnswer = { ...this.fundingAnswer, ready: true, depositNeeded: 0n }
    return this.tx()
  }

  async store(data: Uint8Array | ReadableStream<Uint8Array>, o: FocStoreOptions): Promise<FocStored> {
    this.stores.push({ copies: o.copies, exclude: o.excludeProviderIds ?? [] })
    const size = data instanceof Uint8Array ? data.length : await drain(data)
    this.uploads.push({ size, pieceCid: o.pieceCid! })
    const chosen = this.providers.filter((p) => !(o.excludeProviderIds ?? []).includes(p)).slice(0, o.copies)
    if (chosen.length === 0) throw new NetworkError('REFUSED', 'no provider to store on', { providerReason: 'none left' })
    o.onProgress?.({ kind: 'uploaded', bytes: size })
    const copies: FocCopy[] = []
    const failures: FocStored['failures'] = []
    // The primary takes the upload (a stall there is the whole store's); the others then pull from it, each going on
    // by itself, and the SDK waits for all.
    if (this.plans.get(chosen[0]) === 'stall') await stalled(o.signal, chosen[0])
    await Promise.all(
      chosen.map(async (providerId) => {
        const plan = this.plans.get(providerId) ?? 'ok'
        if (typeof plan === 'object') {
          failures.push({ providerId, reason: plan.refuse })
          return
        }
        o.onProgress?.({ kind: providerId === chosen[0] ? 'stored' : 'pulled', providerId })
        if (plan === 'chain-down-at-add') throw RPC_DOWN
        if (plan === 'hang-before-add') await stalled(o.signal, providerId)
        const txHash = this.tx()
        this.adds.set(txHash, { providerId, pieceCid: o.pieceCid!, outcome: 'added' })
        if (plan === 'hang-in-flight') {
          this.add(providerId, o.pieceCid!)
          await stalled(o.signal, providerId)
        }
        o.onProgress?.({ kind: 'adding', providerId, txHash })
        const piece = this.add(providerId, o.pieceCid!)
        if (plan === 'hang-after-add') await stalled(o.signal, providerId)
        o.onProgress?.({ kind: 'added', providerId, dataSetId: piece.dataSetId })
        copies.push(this.copyOf(piece))
      }),
    )
    copies.sort((a, b) => a.providerId - b.providerId)
    return { pieceCid: o.pieceCid!, size, copies, failures }
  }

  async copyProof(copy: Pick<FocCopy, 'dataSetId' | 'pieceId' | 'addedEpoch'>): Promise<FocCopyProof> {
    this.rpc()
    const piece = this.find(copy.dataSetId, copy.pieceId)
    const proofs = piece?.proofs ?? []
    const last = proofs.at(-1)
    const proved = last !== undefined && last >= copy.addedEpoch
    const missed = piece ? this.missed(piece) : { periods: 0, firstDeadline: null }
    return {
      dataSetLive: piece !== undefined,
      pieceLive: piece?.state === 'live',
      proved,
      missedPeriods: missed.periods,
      firstMissedDeadline: missed.firstDeadline,
      lastProvenEpoch: last ?? copy.addedEpoch,
      nextChallengeEpoch: piece ? (last ?? copy.addedEpoch) + this.maxProvingPeriod - this.challengeWindow : null,
      firstProofDueEpoch: piece?.state === 'live' && !proved ? this.firstWindow(piece) : null,
      maxProvingPeriod: this.maxProvingPeriod,
      challengeWindow: this.challengeWindow,
    }
  }

  async addedCopy(add: { txHash: Hash; providerId: number; pieceCid: string }): Promise<FocAddOutcome> {
    this.rpc()
    const sent = this.adds.get(add.txHash)
    if (!sent || sent.outcome === 'pending') return { status: 'pending' }
    if (sent.outcome === 'reverted') return { status: 'failed' }
    // As the client finds it: the latest live piece of that CID in the provider's data set, whatever the receipt logged.
    const piece = this.pieces.filter((p) => p.providerId === add.providerId && p.pieceCid === add.pieceCid && p.state === 'live').at(-1)
    return piece ? { status: 'added', copy: this.copyOf(piece) } : { status: 'failed' }
  }

  async pieceCopies({ pieceCid }: { pieceCid: string }): Promise<FocCopy[]> {
    this.rpc()
    // As the client reads the chain: live pieces of that CID in our data sets, none scheduled for removal, at the head's epoch.
    return this.pieces
      .filter((p) => p.pieceCid === pieceCid && p.state === 'live')
      .map((p) => ({ ...this.copyOf(p), addedEpoch: this.epoch }))
  }

  /** Adds the piece to the provider's data set, as an add the SDK sent and the gateway never heard of does. */
  addUnheard(providerId: number, pieceCid: string): void {
    this.add(providerId, pieceCid)
  }

  async account(): Promise<FocAccount> {
    this.rpc()
    return { ...this.account_, epoch: BigInt(this.epoch) }
  }

  async removeCopy(copy: Pick<FocCopy, 'providerId' | 'dataSetId' | 'pieceId'>): Promise<Hash> {
    if (this.failRemovals > 0) {
      this.failRemovals--
      throw new NetworkError('UNREACHABLE', `provider ${copy.providerId} does not answer`)
    }
    this.removals.push({ dataSetId: copy.dataSetId, pieceId: copy.pieceId })
    const piece = this.find(copy.dataSetId, copy.pieceId)
    if (piece) piece.state = 'scheduled'
    return this.tx()
  }

  async removalState(copy: Pick<FocCopy, 'dataSetId' | 'pieceId'>): Promise<'live' | 'scheduled' | 'gone'> {
    this.rpc()
    return this.find(copy.dataSetId, copy.pieceId)?.state ?? 'gone'
  }

  async terminateDataSet(dataSetId: bigint): Promise<Hash | undefined> {
    this.rpc()
    if (this.terminations.includes(dataSetId)) return undefined
    this.terminations.push(dataSetId)
    return this.tx()
  }

  retrievePiece(): AsyncIterable<Uint8Array> {
    const fail = () => Promise.reject(new NetworkError('UNREACHABLE', 'the fake serves no bytes'))
    return { [Symbol.asyncIterator]: () => ({ next: fail }) }
  }

  async retrieveBlock(): Promise<Uint8Array> {
    throw new NetworkError('UNREACHABLE', 'the fake serves no bytes')
  }

  /** A proof of every live piece of the provider's data set, accepted now. */
  prove(providerId: number): void {
    for (const p of this.pieces) if (p.providerId === providerId && p.state === 'live') p.proofs.push(this.epoch)
  }

  /** The provider's copies, as the chain holds them. */
  piecesOf(providerId: number): Piece[] {
    return this.pieces.filter((p) => p.providerId === providerId)
  }

  private add(providerId: number, pieceCid: string): Piece {
    let dataSetId = this.dataSets.get(providerId)
    if (dataSetId === undefined) {
      this.dataSets.set(providerId, (dataSetId = this.nextDataSet++))
      this.provingSince.set(dataSetId, this.epoch)
    }
    const pieceId = BigInt(this.pieces.filter((p) => p.dataSetId === dataSetId).length)
    const piece: Piece = { providerId, dataSetId, pieceId, pieceCid, addedEpoch: this.epoch, proofs: [], state: 'live' }
    this.pieces.push(piece)
    return piece
  }

  /**
   * When the window of the piece's first proof opens: proving periods of its data set run from its start, each
   * (start + n·period, start + (n+1)·period], the proof due in its last `challengeWindow` epochs; a piece is first
   * challenged in the period after the one it was added in (period 0 when added as proving started).
   */
  private firstWindow(p: Piece): number {
    const start = this.provingSince.get(p.dataSetId)!
    const addedIn = p.addedEpoch <= start ? -1 : Math.floor((p.addedEpoch - start - 1) / this.maxProvingPeriod)
    let deadline = start + (addedIn + 2) * this.maxProvingPeriod
    while (deadline < this.epoch) deadline += this.maxProvingPeriod
    return deadline - this.challengeWindow
  }

  /**
   * The closed proving periods in a row the piece was not proved in, as the client reads FWSS's proven
   * periods: from the latest one back (none once the current one is proven), among those it was challenged in (from the period after the one it was
   * added in), at most three (the client looks at the current period and three closed ones); and the deadline
   * of the first of them. Period N of a data set proving since A is (A + N·M, A + (N+1)·M], its deadline the last epoch.
   */
  private missed(p: Piece): { periods: number; firstDeadline: number | null } {
    const start = this.provingSince.get(p.dataSetId)!
    const periodOf = (epoch: number) => Math.floor((epoch - start - 1) / this.maxProvingPeriod)
    const proven = new Set(p.proofs.map(periodOf))
    const firstChallenged = p.addedEpoch <= start ? 0 : periodOf(p.addedEpoch) + 1
    let periods = 0
    // None once the current period is proven: the provider proves again.
    if (!proven.has(periodOf(this.epoch)))
      for (let n = periodOf(this.epoch) - 1; n >= firstChallenged && periods < 3 && !proven.has(n); n--) periods++
    const first = periodOf(this.epoch) - periods
    return { periods, firstDeadline: periods === 0 ? null : start + (first + 1) * this.maxProvingPeriod }
  }

  private copyOf(p: Piece): FocCopy {
    return {
      providerId: p.providerId,
      dataSetId: p.dataSetId,
      pieceId: p.pieceId,
      addedEpoch: p.addedEpoch,
      retrievalUrl: `http://127.0.0.1:1/piece/${p.pieceCid}`,
    }
  }

  private find(dataSetId: bigint, pieceId: bigint): Piece | undefined {
    return this.pieces.find((p) => p.dataSetId === dataSetId && p.pieceId === pieceId && p.state !== 'gone')
  }

  private tx(): Hash {
    return `0x${(this.nextTx++).toString(16).padStart(64, '0')}`
  }

  /** A call to the chain's RPC, which fails while it is down. */
  private rpc(): void {
    if (this.chainDown) throw RPC_DOWN
  }
}

/** What the real client (server/network/foc/errors.ts focNetworkError) throws when the chain's RPC refuses connections. */
const RPC_DOWN = new NetworkError(
  'UNREACHABLE',
  "the Onchain Cloud's RPC (http://127.0.0.1:1235) did not answer: connect ECONNREFUSED 127.0.0.1:1235",
  { chainNode: true },
)

async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  let size = 0
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) size += chunk.length
  return size
}

/** Never goes on: ends when the upload is cut short (its idle timer or a stop), as the SDK's store does. */
function stalled(signal: AbortSignal | undefined, providerId: number): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () =>
      reject(new NetworkError('TIMED_OUT', (signal?.reason as Error)?.message ?? 'aborted', { provider: String(providerId) }))
    if (signal?.aborted) fail()
    signal?.addEventListener('abort', fail, { once: true })
  })
}

export { timedOut }

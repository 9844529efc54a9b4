import { bytesToHex, decodeAbiParameters, encodePacked, keccak256, type Hex } from 'viem'
import type { PdpChain } from './pdp-provider-chain.ts'
import type { DataSet, PieceAdd, ProviderDb, PullItem } from './pdp-provider-db.ts'
import { parsePieceCid, proveLeaf, type LeafProof } from './pdp-provider-piece.ts'
import type { PieceStore } from './pdp-provider-store.ts'
import type { FaultPlan } from '../simnet/faults.ts'

/**
 * The chain-driven work of a simulated Curio, one pass per new chain head, in
 * the order of Curio's watchers (tasks/pdpv0/watcher.go): receipts of its own
 * messages, data sets created, pieces added, proving-period reconciliation,
 * then the proving tasks (init and next proving period, prove). Pulls and CAR
 * indexing run from the same pass.
 */

/** Curio pdp/contract/addresses.go NumChallenges. */
export const NUM_CHALLENGES = 5
/** Curio tasks/message/watch_eth.go MinEthConfidence: a message counts once a block is built on it. */
export const MIN_ETH_CONFIDENCE = 1
/** Failed challenge requests in a row after which proving stops for a data set (a terminated or deleted one keeps refusing). */
export const MAX_PROVING_FAILURES = 5

export interface TaskLog {
  debug(obj: object, msg?: string): void
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

export interface TaskContext {
  db: ProviderDb
  store: PieceStore
  chain: PdpChain
  log: TaskLog
  /** True while the provider skips its proofs (the `stop-proving` fault). */
  provingStopped(): boolean
  /** True while the provider reads no uploads or pulls (the `stall` fault). */
  pullsStalled(): boolean
  fetch: typeof fetch
  faults?: FaultPlan
  /** Longest wait for a pull source to send bytes. */
  pullIdleTimeoutMs: number
  /** Called when a piece of an indexed data set can be indexed, and when pulls complete (to wake waiters). */
  onChange?(): void
}

/**
 * The challenged leaf indexes of a proof, as PDPVerifier draws them
 * (FilOzone/pdp src/PDPVerifier.sol provePossession, and Curio
 * tasks/pdpv0/task_prove.go generateChallengeIndex):
 * keccak256(abi.encodePacked(uint256 seed, uint256 setId, uint64 i)) mod leafCount.
 */
export function challengeIndexes(seed: bigint, setId: bigint, leafCount: bigint, count = NUM_CHALLENGES): bigint[] {
  const out: bigint[] = []
  for (let i = 0n; i < BigInt(count); i++) {
    out.push(BigInt(keccak256(encodePacked(['uint256', 'uint256', 'uint64'], [seed, setId, i]))) % leafCount)
  }
  return out
}

const proofToHex = (p: LeafProof) => ({ leaf: bytesToHex(p.leaf), proof: p.proof.map((n) => bytesToHex(n)) })

export class CurioTasks {
  private running: Promise<void> | null = null
  private lastHead = -1
  private readonly pulling = new Map<string, Promise<void>>()

  constructor(private readonly c: TaskContext) {}

  /** One pass (a new tipset in Curio). Passes never overlap; a call during one waits for it. */
  tick(): Promise<void> {
    if (this.running) return this.running
    this.running = this.pass().finally(() => (this.running = null))
    return this.running
  }

  private async pass(): Promise<void> {
    const head = await this.c.chain.headEpoch()
    const newHead = head !== this.lastHead
    this.lastHead = head
    this.startPulls()
    await this.indexPending()
    if (!newHead) return
    await this.watchReceipts(head)
    await this.watchCreatesAndAdds()
    await this.reconcileProvingPeriods()
    await this.initProvingPeriods(head)
    await this.nextProvingPeriods(head)
    await this.prove(head)
  }

  // ---- Receipts (Curio tasks/message/watch_eth.go, and the message_waits_eth triggers of harmonydb/sql) ----

  private async watchReceipts(head: number): Promise<void> {
    const { db } = this.c
    let changed = false
    for (const [hash, wait] of Object.entries(db.t.waits)) {
      if (wait.status !== 'pending') continue
      let receipt
      try {
        receipt = await this.c.chain.receipt(hash as Hex)
      } catch (err) {
        this.c.log.warn({ err, hash }, 'simulated Curio: receipt lookup failed')
        continue
      }
      if (!receipt || head - receipt.blockNumber < MIN_ETH_CONFIDENCE) continue
      wait.status = 'confirmed'
      wait.success = receipt.success
      wait.blockNumber = receipt.blockNumber
      if (receipt.dataSetId !== undefined) wait.dataSetId = Number(receipt.dataSetId)
      if (receipt.pieceIds) wait.pieceIds = receipt.pieceIds.map(Number)
      // update_pdp_data_set_creates / update_pdp_data_set_piece_adds triggers.
      const create = db.t.creates[hash]
      if (create && !create.dataSetCreated) create.ok = receipt.success
      for (const add of db.t.adds) if (add.txHash === hash) add.ok = receipt.success
      changed = true
      // A proving period brings two of these per data set: only a failed one is worth an operator's eye.
      this.c.log[receipt.success ? 'debug' : 'info'](
        { hash, reason: wait.reason, success: receipt.success, block: receipt.blockNumber },
        'simulated Curio: message landed',
      )
    }
    if (changed) await db.save()
  }

  // ---- Data sets and pieces (tasks/pdpv0/dataset_create_watch.go, dataset_addpiece_watch.go) ----

  private async watchCreatesAndAdds(): Promise<void> {
    const { db, chain } = this.c
    for (const create of Object.values(db.t.creates)) {
      if (create.ok !== true || create.dataSetCreated) continue
      const wait = db.t.waits[create.txHash]
      if (wait?.dataSetId === undefined) {
        this.c.log.error({ hash: create.txHash }, 'simulated Curio: DataSetCreated event not found in receipt')
        continue
      }
      const id = wait.dataSetId
      let provingPeriod: number
      let challengeWindow: number
      try {
        const listener = await chain.dataSetListener(BigInt(id))
        const config = await chain.provingConfig(listener)
        provingPeriod = Number(config.maxProvingPeriod)
        challengeWindow = Number(config.challengeWindow)
      } catch (err) {
        this.c.log.warn({ err, dataSetId: id }, 'simulated Curio: failed to get max proving period')
        continue
      }
      // The rows of the data set and of its first pieces land together, so a client that sees
      // the data set created finds its piece addition too.
      db.t.dataSets[String(id)] = {
        id,
        service: create.service,
        createTxHash: create.txHash,
        provingPeriod,
        challengeWindow,
        ipfsIndexing: ipfsIndexingFromExtraData(create.extraData),
        initReady: false,
        proveAtEpoch: null,
        prevProveAtEpoch: null,
        challengeRequestMsgHash: null,
        ppReconcileHash: null,
        prevChallengeRequestEpoch: null,
      }
      create.dataSetCreated = true
      this.applyPieceAdds(create.txHash, id)
      this.c.log.info({ dataSetId: id, hash: create.txHash }, 'simulated Curio: data set created')
      await db.save()
    }
    const pendingAdds = new Set(db.t.adds.filter((a) => a.ok === true && !a.piecesAdded).map((a) => a.txHash))
    for (const hash of pendingAdds) {
      const rows = db.t.adds.filter((a) => a.txHash === hash)
      const dataSetId = rows[0].dataSet ?? db.t.waits[hash]?.dataSetId ?? null
      if (dataSetId === null || !db.dataSet(dataSetId)) continue
      this.applyPieceAdds(hash, dataSetId)
      await db.save()
    }
  }

  private applyPieceAdds(hash: string, dataSetId: number): void {
    const { db } = this.c
    const rows: PieceAdd[] = db.t.adds
      .filter((a) => a.txHash === hash && !a.piecesAdded)
      .sort((a, b) => a.index - b.index || a.subPieceOffset - b.subPieceOffset)
    if (rows.length === 0) return
    const pieceIds = db.t.waits[hash]?.pieceIds
    if (!pieceIds) {
      this.c.log.error({ hash }, 'simulated Curio: PiecesAdded event not found in receipt')
      return
    }
    const dataSet = db.dataSet(dataSetId)!
    if (dataSet.prevChallengeRequestEpoch === null && dataSet.challengeRequestMsgHash === null && dataSet.proveAtEpoch === null)
      dataSet.initReady = true
    for (const row of rows) {
      if (row.index >= pieceIds.length) {
        this.c.log.error({ hash, index: row.index }, 'simulated Curio: piece index out of bounds of the PiecesAdded event')
        return
      }
    }
    for (const row of rows) {
      db.t.pieces.push({
        dataSet: dataSetId,
        pieceId: pieceIds[row.index],
        piece: row.piece,
        rawSize: row.rawSize,
        subPiece: row.subPiece,
        subPieceOffset: row.subPieceOffset,
        subPieceSize: row.subPieceSize,
        pieceRef: row.pieceRef,
        addTxHash: hash,
        addIndex: row.index,
        removed: false,
        rmTxHash: null,
      })
      row.piecesAdded = true
      row.dataSet = dataSetId
      if (dataSet.ipfsIndexing) {
        const ref = db.t.pieceRefs.find((r) => r.id === row.pieceRef)
        if (ref && !ref.indexed) ref.needsIndexing = true
      }
    }
    this.c.log.info({ dataSetId, hash, pieceIds: rows.map((r) => pieceIds[r.index]) }, 'simulated Curio: pieces added')
  }

  // ---- Proving period side effects (tasks/pdpv0/watch_proving_period.go) ----

  private async reconcileProvingPeriods(): Promise<void> {
    const { db, chain } = this.c
    for (const dataSet of Object.values(db.t.dataSets)) {
      const hash = dataSet.ppReconcileHash
      if (!hash) continue
      const wait = db.t.waits[hash]
      if (!wait || wait.status === 'pending') continue
      dataSet.ppReconcileHash = null
      if (wait.success) {
        dataSet.provingFailures = 0
        // nextProvingPeriod applies the scheduled removals.
        for (const piece of db.t.pieces) {
          if (piece.dataSet !== dataSet.id || piece.removed || !piece.rmTxHash) continue
          try {
            if (!(await chain.pieceLive(BigInt(dataSet.id), BigInt(piece.pieceId)))) piece.removed = true
          } catch (err) {
            this.c.log.warn({ err, dataSetId: dataSet.id }, 'simulated Curio: pieceLive failed')
          }
        }
      } else if (dataSet.challengeRequestMsgHash === hash || dataSet.proveAtEpoch !== null) {
        // The challenge request failed: back to the schedule the chain still has (tasks/pdpv0/failure_handling.go).
        this.c.log.warn({ dataSetId: dataSet.id, hash }, 'simulated Curio: nextProvingPeriod failed')
        dataSet.challengeRequestMsgHash = null
        dataSet.proveAtEpoch = dataSet.prevProveAtEpoch
        if (dataSet.proveAtEpoch === null) dataSet.initReady = true
        this.provingFailed(dataSet)
      }
      await db.save()
    }
  }

  // ---- Init proving period (tasks/pdpv0/task_init_pp.go) ----

  private async initProvingPeriods(head: number): Promise<void> {
    const { db, chain } = this.c
    for (const dataSet of Object.values(db.t.dataSets)) {
      if (!dataSet.initReady || dataSet.proveAtEpoch !== null || dataSet.ppReconcileHash || dataSet.unrecoverableEpoch != null) continue
      const setId = BigInt(dataSet.id)
      try {
        if ((await chain.dataSetLeafCount(setId)) === 0n) {
          dataSet.initReady = false
          this.c.log.warn({ dataSetId: dataSet.id }, 'simulated Curio: initial challenge window scheduling skipped, no leaves')
          await db.save()
          continue
        }
        const config = await chain.provingConfig(await chain.dataSetListener(setId))
        // A buffer of half a challenge window so the proof still falls within it.
        const proveAt = config.initChallengeWindowStart + config.challengeWindow / 2n
        const hash = await chain.nextProvingPeriod(setId, proveAt, '0x')
        this.scheduled(dataSet, hash, Number(proveAt), head, 'pdp-proving-init')
        dataSet.provingPeriod = Number(config.maxProvingPeriod)
        dataSet.challengeWindow = Number(config.challengeWindow)
        this.c.log.info({ dataSetId: dataSet.id, epoch: Number(proveAt), hash }, 'simulated Curio: initial challenge window scheduled')
      } catch (err) {
        this.c.log.warn({ err, dataSetId: dataSet.id }, 'simulated Curio: failed to set up initial proving period')
        this.provingFailed(dataSet)
      }
      await db.save()
    }
  }

  /** Counts a failed challenge request; past the limit the data set is given up (tasks/pdpv0/failure_handling.go). */
  private provingFailed(dataSet: DataSet): void {
    dataSet.provingFailures = (dataSet.provingFailures ?? 0) + 1
    if (dataSet.provingFailures >= MAX_PROVING_FAILURES) {
      dataSet.unrecoverableEpoch = this.lastHead
      this.c.log.error({ dataSetId: dataSet.id, failures: dataSet.provingFailures }, 'simulated Curio: proving given up for the data set')
    }
  }

  private scheduled(dataSet: DataSet, hash: Hex, proveAt: number, head: number, reason: string): void {
    const key = hash.toLowerCase()
    this.c.db.t.waits[key] = { status: 'pending', success: null, reason }
    dataSet.prevProveAtEpoch = dataSet.proveAtEpoch
    dataSet.challengeRequestMsgHash = key
    dataSet.ppReconcileHash = key
    dataSet.prevChallengeRequestEpoch = head
    dataSet.proveAtEpoch = proveAt
  }

  // ---- Next proving period (tasks/pdpv0/task_next_pp.go) ----

  private async nextProvingPeriods(head: number): Promise<void> {
    const { db, chain } = this.c
    for (const dataSet of Object.values(db.t.dataSets)) {
      if (
        dataSet.proveAtEpoch === null ||
        dataSet.ppReconcileHash ||
        dataSet.unrecoverableEpoch != null ||
        dataSet.proveAtEpoch + dataSet.challengeWindow > head
      )
        continue
      const setId = BigInt(dataSet.id)
      try {
        const listener = await chain.dataSetListener(setId)
        const config = await chain.provingConfig(listener)
        dataSet.provingPeriod = Number(config.maxProvingPeriod)
        dataSet.challengeWindow = Number(config.challengeWindow)
        const next = await chain.nextChallengeWindowStart(listener, setId)
        const hash = await chain.nextProvingPeriod(setId, next, '0x')
        this.scheduled(dataSet, hash, Number(next), head, 'pdp-proving-period')
        this.c.log.debug({ dataSetId: dataSet.id, epoch: Number(next), hash }, 'simulated Curio: next challenge window scheduled')
      } catch (err) {
        this.c.log.warn({ err, dataSetId: dataSet.id }, 'simulated Curio: failed to set up next proving period')
        this.provingFailed(dataSet)
      }
      await db.save()
    }
  }

  // ---- Prove (tasks/pdpv0/task_prove.go) ----

  private async prove(head: number): Promise<void> {
    const { db } = this.c
    for (const dataSet of Object.values(db.t.dataSets)) {
      const hash = dataSet.challengeRequestMsgHash
      if (!hash || dataSet.proveAtEpoch === null) continue
      const wait = db.t.waits[hash]
      // One block later than the challenge epoch, against reorgs ("premature proof").
      if (!wait || wait.status !== 'confirmed' || !wait.success || !(dataSet.proveAtEpoch < head - 1)) continue
      dataSet.challengeRequestMsgHash = null
      await db.save()
      if (this.c.provingStopped()) {
        this.c.log.warn({ dataSetId: dataSet.id, proveAt: dataSet.proveAtEpoch }, 'simulated Curio: proving stopped (fault), no proof sent')
        continue
      }
      if (dataSet.proveAtEpoch + dataSet.challengeWindow < head) {
        this.c.log.error({ dataSetId: dataSet.id }, 'simulated Curio: prove task awoke too late, proving period deadline missed')
        continue
      }
      try {
        await this.proveDataSet(dataSet, head)
      } catch (err) {
        this.c.log.error({ err, dataSetId: dataSet.id }, 'simulated Curio: proof submission failed')
      }
    }
  }

  private async proveDataSet(dataSet: DataSet, head: number): Promise<void> {
    const { chain, db } = this.c
    const setId = BigInt(dataSet.id)
    const challengeEpoch = await chain.nextChallengeEpoch(setId)
    if (challengeEpoch === 0n) {
      dataSet.proveAtEpoch = null
      dataSet.initReady = false
      this.c.log.info({ dataSetId: dataSet.id }, 'simulated Curio: disabling proving, no challenge epoch')
      await db.save()
      return
    }
    const leaves = await chain.challengeRange(setId)
    if (leaves === 0n) {
      dataSet.proveAtEpoch = null
      dataSet.initReady = false
      await db.save()
      return
    }
    const seed = await chain.randomness(challengeEpoch)
    const proofs = await this.generateProofs(dataSet, seed, leaves)
    // Three times the fee asked, for certainty; the verifier refunds the rest.
    const fee = (await chain.proofFee(setId)) * 3n
    const hash = await chain.provePossession(setId, proofs.map(proofToHex), fee)
    db.t.waits[hash.toLowerCase()] = { status: 'pending', success: null, reason: 'pdp-prove' }
    db.t.proofs.push({ dataSetId: dataSet.id, challengeEpoch: Number(challengeEpoch), sentAtEpoch: head, txHash: hash.toLowerCase() })
    // The most recent proofs are enough for tests and logs; the database stays small on a long run.
    if (db.t.proofs.length > 1000) db.t.proofs.splice(0, db.t.proofs.length - 1000)
    await db.save()
    this.c.log.debug({ dataSetId: dataSet.id, challengeEpoch: Number(challengeEpoch), hash }, 'simulated Curio: proof sent')
  }

  /** Proofs for the challenged leaves (task_prove.go GenerateProofs): the piece of each from findPieceIds, then its Merkle path. */
  async generateProofs(dataSet: DataSet, seed: bigint, leaves: bigint): Promise<LeafProof[]> {
    const setId = BigInt(dataSet.id)
    const challenges = challengeIndexes(seed, setId, leaves)
    const found = await this.c.chain.findPieceIds(setId, challenges)
    const proofs: LeafProof[] = []
    for (const { pieceId, offset } of found) {
      const piece = this.c.db.t.pieces.find((p) => p.dataSet === dataSet.id && p.pieceId === Number(pieceId))
      if (!piece) throw new Error(`piece ${pieceId} of data set ${dataSet.id} is not known`)
      if (piece.subPiece !== piece.piece) throw new Error('proofs of aggregated pieces are not simulated')
      const stored = await this.c.store.meta(piece.piece)
      if (!stored) throw new Error(`piece ${piece.piece} is not stored`)
      const layer = await this.c.store.layer(piece.piece)
      const proof = await proveLeaf(
        (at, length) => this.c.store.read(piece.piece, at, length),
        { height: stored.height, layer, layerLevel: stored.layerLevel },
        Number(offset),
      )
      proofs.push(proof)
    }
    return proofs
  }

  // ---- CAR indexing (tasks/indexing, for data sets with withIPFSIndexing) ----

  private async indexPending(): Promise<void> {
    const { db, store } = this.c
    for (const ref of db.t.pieceRefs) {
      if (!ref.needsIndexing || ref.indexed) continue
      ref.needsIndexing = false
      const index = await store.indexCar(ref.pieceCid)
      ref.indexed = index !== null
      this.c.log.info(
        { pieceCid: ref.pieceCid, blocks: index ? Object.keys(index).length : 0 },
        index ? 'simulated Curio: piece indexed' : 'simulated Curio: piece is not a CAR, not indexed',
      )
      await db.save()
      this.c.onChange?.()
    }
  }

  // ---- Pulls (tasks/pdpv0/task_pull_piece.go) ----

  /** Resolves once no pass is running. */
  async settled(): Promise<void> {
    while (this.running || this.pulling.size > 0) {
      await this.running?.catch(() => {})
      await Promise.all(this.pulling.values())
    }
  }

  /** Starts every pending pull item not already running. */
  startPulls(): void {
    if (this.c.pullsStalled()) return
    for (const pull of this.c.db.t.pulls) {
      for (const item of pull.items) {
        if (item.status !== 'pending' && item.status !== 'retrying') continue
        const key = `${pull.id}/${item.pieceCid}/${item.sourceUrl}`
        if (this.pulling.has(key)) continue
        this.pulling.set(
          key,
          this.pullItem(pull.service, item)
            .catch((err: unknown) => this.c.log.error({ err }, 'simulated Curio: pull task failed'))
            .finally(() => this.pulling.delete(key)),
        )
      }
    }
  }

  private async pullItem(service: string, item: PullItem): Promise<void> {
    const { db, store } = this.c
    item.status = item.attempts > 0 ? 'retrying' : 'inProgress'
    item.attempts++
    try {
      // A piece already parked here completes at once (completeAlreadyParkedItems).
      let parked = (await store.meta(item.pieceCid)) !== null && (await store.dataPresent(item.pieceCid))
      if (!parked) {
        const body = await this.download(item)
        const { stashId, commitment } = await store.stash(body, item.rawSize)
        const expected = parsePieceCid(item.pieceCid)
        if (commitment.rawSize !== item.rawSize || !sameBytes(commitment.root, expected.root)) {
          await store.removeStash(stashId)
          throw new PullFailure(`CommP mismatch: downloaded data does not match ${item.pieceCid} of ${item.rawSize} bytes`)
        }
        await store.park(stashId, commitment)
        parked = true
      }
      if (!db.pieceRefByCid(item.pieceCid, service)) {
        db.t.pieceRefs.push({
          id: db.nextId(),
          service,
          pieceCid: item.pieceCid,
          rawSize: item.rawSize,
          createdAt: Date.now(),
          needsIndexing: false,
          indexed: false,
        })
      }
      item.status = 'complete'
      this.c.log.info({ pieceCid: item.pieceCid, source: item.sourceUrl }, 'simulated Curio: piece pulled')
    } catch (err) {
      item.status = 'failed'
      item.error = err instanceof Error ? err.message : String(err)
      this.c.log.warn({ err, pieceCid: item.pieceCid, source: item.sourceUrl }, 'simulated Curio: pull failed')
    }
    await db.save()
    this.c.onChange?.()
  }

  private async download(item: PullItem): Promise<AsyncIterable<Uint8Array>> {
    const fault = this.c.faults?.draw('transfer', item.sourceUrl)
    if (fault?.kind === 'fail') throw new PullFailure('connection reset (simulated fault)')
    const controller = new AbortController()
    const res = await this.c.fetch(item.sourceUrl, { signal: controller.signal })
    if (res.status !== 200 || !res.body) throw new PullFailure(`HTTP status ${res.status} from source`)
    const reader = res.body.getReader()
    const idle = this.c.pullIdleTimeoutMs
    const stallMs = fault?.kind === 'stall' ? fault.ms : 0
    return (async function* () {
      let first = true
      while (true) {
        if (first && stallMs > 0) await new Promise((r) => setTimeout(r, stallMs))
        first = false
        let timer: NodeJS.Timeout | undefined
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            controller.abort()
            reject(new PullFailure('source stalled'))
          }, idle)
        })
        try {
          const { done, value } = await Promise.race([reader.read(), timeout])
          if (done) return
          yield value
        } finally {
          clearTimeout(timer)
        }
      }
    })()
  }
}

class PullFailure extends Error {
  override name = 'PullFailure'
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}

/**
 * Whether a data set's create extraData asks for IPFS indexing (Curio
 * pdp/indexing.go IPFSIndexingFromExtraData): the FWSS create payload
 * (address payer, uint256 clientDataSetId, string[] keys, string[] values,
 * bytes signature), alone or first of (bytes create, bytes add), has the key
 * "withIPFSIndexing". Null when the extraData is not an FWSS payload.
 */
export function ipfsIndexingFromExtraData(extraData: Hex): boolean | null {
  const keys = createMetadataKeys(extraData)
  return keys === null ? null : keys.includes('withIPFSIndexing')
}

function createMetadataKeys(extraData: Hex): string[] | null {
  if (extraData === '0x' || extraData.length < 4) return null
  const decodeCreate = (payload: Hex): string[] => {
    const [, , keys] = decodeAbiParameters(
      [{ type: 'address' }, { type: 'uint256' }, { type: 'string[]' }, { type: 'string[]' }, { type: 'bytes' }],
      payload,
    )
    return [...keys]
  }
  try {
    const [create] = decodeAbiParameters([{ type: 'bytes' }, { type: 'bytes' }], extraData)
    return decodeCreate(create)
  } catch {
    try {
      return decodeCreate(extraData)
    } catch {
      return null
    }
  }
}

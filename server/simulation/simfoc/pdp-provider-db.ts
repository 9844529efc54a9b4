import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { Hex } from 'viem'

/**
 * A simulated Curio's database: the rows of Curio's PDP tables it needs
 * (harmony/harmonydb/sql/*pdp*.sql), kept in memory and saved as JSON after
 * each change so a restarted provider picks up where it was.
 * Piece CIDs are stored as PieceCIDv1 with their raw size, as Curio does.
 */

/** message_waits_eth. `failed`: never landed; `confirmed` with success false: reverted. */
export interface MessageWait {
  status: 'pending' | 'confirmed' | 'failed'
  success: boolean | null
  reason: string
  blockNumber?: number
  dataSetId?: number
  pieceIds?: number[]
}

/** pdp_piece_uploads: an upload the notify task moves to pdp_piecerefs once its piece is parked. */
export interface PieceUpload {
  id: string
  service: string
  pieceCid: string
  rawSize: number
  notifyUrl: string
  /** The parked piece (its v1) once the bytes are in; null while waiting for them. */
  pieceRef: string | null
}

/** pdp_piece_streaming_uploads. */
export interface StreamingUpload {
  id: string
  service: string
  complete: boolean
  pieceCid?: string
  rawSize?: number
}

/** pdp_piecerefs: a piece this provider holds for a service. */
export interface PieceRef {
  id: number
  service: string
  pieceCid: string
  rawSize: number
  createdAt: number
  needsIndexing: boolean
  indexed: boolean
}

/** pdp_data_set_creates. */
export interface DataSetCreate {
  txHash: string
  service: string
  ok: boolean | null
  dataSetCreated: boolean
  extraData: Hex
}

/** pdp_data_set_piece_adds. */
export interface PieceAdd {
  dataSet: number | null
  piece: string
  rawSize: number
  txHash: string
  index: number
  subPiece: string
  subPieceOffset: number
  subPieceSize: number
  pieceRef: number
  ok: boolean | null
  piecesAdded: boolean
}

/** pdp_data_sets. */
export interface DataSet {
  id: number
  service: string
  createTxHash: string
  provingPeriod: number
  challengeWindow: number
  ipfsIndexing: boolean | null
  initReady: boolean
  proveAtEpoch: number | null
  /** The proving schedule before the last nextProvingPeriod, restored if that message fails. */
  prevProveAtEpoch: number | null
  challengeRequestMsgHash: string | null
  /** The hash of the last nextProvingPeriod until its effects (removals) are reconciled. */
  ppReconcileHash: string | null
  prevChallengeRequestEpoch: number | null
  /** Challenge requests that failed in a row (sent and reverted, or refused at estimate). */
  provingFailures?: number
  /** Set when proving gave up on the data set (Curio's unrecoverable_proving_failure_epoch). */
  unrecoverableEpoch?: number | null
}

/** pdp_data_set_pieces. */
export interface DataSetPiece {
  dataSet: number
  pieceId: number
  piece: string
  rawSize: number
  subPiece: string
  subPieceOffset: number
  subPieceSize: number
  pieceRef: number
  addTxHash: string
  addIndex: number
  removed: boolean
  rmTxHash: string | null
}

export type PullStatus = 'pending' | 'inProgress' | 'retrying' | 'complete' | 'failed'

/** pdp_piece_pull_items. */
export interface PullItem {
  pieceCid: string
  rawSize: number
  sourceUrl: string
  status: PullStatus
  attempts: number
  error?: string
}

/** pdp_piece_pulls. */
export interface Pull {
  id: number
  service: string
  extraDataHash: string
  dataSetId: number
  recordKeeper: string
  clientAddress: string
  items: PullItem[]
}

/** A proof this provider sent, for tests and the log (Curio keeps them in its task history). */
export interface ProofRecord {
  dataSetId: number
  challengeEpoch: number
  sentAtEpoch: number
  txHash: string
}

export interface DbTables {
  waits: Record<string, MessageWait>
  uploads: Record<string, PieceUpload>
  streaming: Record<string, StreamingUpload>
  pieceRefs: PieceRef[]
  creates: Record<string, DataSetCreate>
  adds: PieceAdd[]
  dataSets: Record<string, DataSet>
  pieces: DataSetPiece[]
  pulls: Pull[]
  proofs: ProofRecord[]
  nextId: number
}

const empty = (): DbTables => ({
  waits: {},
  uploads: {},
  streaming: {},
  pieceRefs: [],
  creates: {},
  adds: [],
  dataSets: {},
  pieces: [],
  pulls: [],
  proofs: [],
  nextId: 1,
})

export class ProviderDb {
  t: DbTables = empty()
  private saving: Promise<void> = Promise.resolve()
  private dirty = false

  constructor(private readonly file: string) {}

  async load(): Promise<void> {
    try {
      this.t = { ...empty(), ...(JSON.parse(await readFile(this.file, 'utf8')) as Partial<DbTables>) }
    } catch {
      this.t = empty()
    }
  }

  nextId(): number {
    return this.t.nextId++
  }

  /** Saves after the current changes; concurrent calls share one write. */
  save(): Promise<void> {
    if (this.dirty) return this.saving
    this.dirty = true
    this.saving = this.saving.then(async () => {
      this.dirty = false
      await mkdir(dirname(this.file), { recursive: true })
      const temp = `${this.file}.${process.pid}.tmp`
      await writeFile(temp, JSON.stringify(this.t))
      await rename(temp, this.file)
    })
    return this.saving
  }

  /** Waits for pending writes (before closing). */
  flush(): Promise<void> {
    return this.saving
  }

  pieceRefByCid(pieceCid: string, service?: string): PieceRef | undefined {
    return this.t.pieceRefs.find((r) => r.pieceCid === pieceCid && (service === undefined || r.service === service))
  }

  dataSet(id: number): DataSet | undefined {
    return this.t.dataSets[String(id)]
  }
}

import { CarIndexer } from '@ipld/car/indexer'
import { randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { CID } from 'multiformats/cid'
import { PieceHasher, pieceCidV1, pieceCidV2, type PieceCommitment } from './pdp-provider-piece.ts'

/**
 * A simulated Curio's piece storage on disk: uploads land in a stash while
 * their CommP is computed (Curio's StashStore), complete pieces are parked
 * under their PieceCIDv1 (Curio's parked_pieces, long term), each with the
 * layer of its tree kept for proving and, for a CAR, an index of its blocks
 * (Curio pdp/indexing.go and tasks/indexing).
 *
 *   <dir>/stash/<uuid>          an upload being received or not yet finalized
 *   <dir>/pieces/<v1>.data      the raw piece bytes
 *   <dir>/pieces/<v1>.json      { rawSize, height, layerLevel }
 *   <dir>/pieces/<v1>.layer     the kept tree layer
 *   <dir>/pieces/<v1>.car.json  block CID → [offset, length], when indexed
 */

export interface StoredPiece {
  v1: string
  v2: string
  rawSize: number
  height: number
  layerLevel: number
}

export class PieceTooLargeError extends Error {
  override name = 'PieceTooLargeError'
}

export class UploadStalledError extends Error {
  override name = 'UploadStalledError'
}

/** Offsets of a CAR's blocks (their bytes, not their section headers) by multihash (hex), as Curio's index is keyed. */
export type CarIndex = Record<string, [offset: number, length: number]>

const multihashKey = (cid: CID): string => Buffer.from(cid.multihash.bytes).toString('hex')

export interface StashResult {
  stashId: string
  commitment: PieceCommitment
}

export class PieceStore {
  private readonly stashDir: string
  private readonly pieceDir: string
  private readonly metas = new Map<string, StoredPiece>()
  private readonly layers = new Map<string, Uint8Array>()
  private readonly indexes = new Map<string, CarIndex>()

  constructor(readonly dir: string) {
    this.stashDir = join(dir, 'stash')
    this.pieceDir = join(dir, 'pieces')
  }

  async init(): Promise<void> {
    await mkdir(this.stashDir, { recursive: true })
    await mkdir(this.pieceDir, { recursive: true })
  }

  private file(v1: string, ext: string): string {
    return join(this.pieceDir, `${v1}.${ext}`)
  }

  stashPath(stashId: string): string {
    return join(this.stashDir, stashId)
  }

  /**
   * Writes `body` into a new stash file while computing its CommP. More than
   * `maxBytes` rejects with PieceTooLargeError (Curio's TimeoutLimitReader cap).
   */
  async stash(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<StashResult> {
    const stashId = randomUUID()
    const path = this.stashPath(stashId)
    const hasher = new PieceHasher()
    const out = await open(path, 'w', 0o600)
    try {
      for await (const chunk of body) {
        const bytes = chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk as ArrayBuffer)
        if (hasher.size + bytes.length > maxBytes) throw new PieceTooLargeError(`more than ${maxBytes} bytes`)
        hasher.update(bytes)
        let done = 0
        while (done < bytes.length) done += (await out.write(bytes, done, bytes.length - done)).bytesWritten
      }
      await out.close()
    } catch (err) {
      await out.close().catch(() => {})
      await rm(path, { force: true })
      throw err
    }
    return { stashId, commitment: hasher.digest() }
  }

  async removeStash(stashId: string): Promise<void> {
    await rm(this.stashPath(stashId), { force: true })
  }

  /** Moves a stashed upload into long-term storage (parkpiece.Upsert); an already parked piece keeps its bytes. */
  async park(stashId: string, commitment: PieceCommitment): Promise<StoredPiece> {
    const v1 = pieceCidV1(commitment.root).toString()
    const piece: StoredPiece = {
      v1,
      v2: pieceCidV2(commitment.root, commitment.rawSize, commitment.height).toString(),
      rawSize: commitment.rawSize,
      height: commitment.height,
      layerLevel: commitment.layerLevel,
    }
    if (this.hasData(v1) && (await this.dataPresent(v1))) {
      await this.removeStash(stashId)
      return this.metas.get(v1)!
    }
    await writeFile(this.file(v1, 'layer'), commitment.layer)
    await writeFile(this.file(v1, 'json'), JSON.stringify(piece))
    await rename(this.stashPath(stashId), this.file(v1, 'data'))
    this.metas.set(v1, piece)
    this.layers.set(v1, commitment.layer)
    return piece
  }

  /** The parked piece's record, loaded from disk on first use; null when this provider never parked it. */
  async meta(v1: string): Promise<StoredPiece | null> {
    const known = this.metas.get(v1)
    if (known) return known
    try {
      const piece = JSON.parse(await readFile(this.file(v1, 'json'), 'utf8')) as StoredPiece
      this.metas.set(v1, piece)
      return piece
    } catch {
      return null
    }
  }

  /** Whether the record is in memory (call `meta` first after a restart). */
  hasData(v1: string): boolean {
    return this.metas.has(v1)
  }

  /** Whether the piece's bytes are still on disk (a `lose` fault removes them). */
  async dataPresent(v1: string): Promise<boolean> {
    try {
      await stat(this.file(v1, 'data'))
      return true
    } catch {
      return false
    }
  }

  async layer(v1: string): Promise<Uint8Array> {
    const known = this.layers.get(v1)
    if (known) return known
    const layer = new Uint8Array(await readFile(this.file(v1, 'layer')))
    this.layers.set(v1, layer)
    return layer
  }

  /** Reads up to `length` bytes at `offset`; short at the end. Throws when the data is gone. */
  async read(v1: string, offset: number, length: number): Promise<Uint8Array> {
    const handle = await open(this.file(v1, 'data'), 'r')
    try {
      const buf = new Uint8Array(length)
      let got = 0
      while (got < length) {
        const { bytesRead } = await handle.read(buf, got, length - got, offset + got)
        if (bytesRead === 0) break
        got += bytesRead
      }
      return buf.subarray(0, got)
    } finally {
      await handle.close()
    }
  }

  /** A stream of bytes [start, end] inclusive. */
  stream(v1: string, start: number, end: number): Readable {
    return createReadStream(this.file(v1, 'data'), { start, end })
  }

  /** Drops the bytes of one piece, or of all pieces, keeping the records (a disk lost under a running provider). */
  async lose(v1?: string): Promise<void> {
    const targets = v1 ? [v1] : [...this.metas.keys()]
    for (const cid of targets) await rm(this.file(cid, 'data'), { force: true })
    for (const cid of targets) this.indexes.delete(cid)
  }

  /** Indexes a parked piece as a CAR. Returns null (and keeps no index) when the bytes are not a CAR. */
  async indexCar(v1: string): Promise<CarIndex | null> {
    try {
      const indexer = await CarIndexer.fromIterable(createReadStream(this.file(v1, 'data')))
      const index: CarIndex = {}
      try {
        for await (const block of indexer) index[multihashKey(block.cid as CID)] = [block.blockOffset, block.blockLength]
      } catch (err) {
        // A zero-length section ends the CAR: the piece is padded with zeros after it (Curio reads with
        // carv2.ZeroLengthSectionAsEOF(true), tasks/indexing/index_helpers.go).
        if (!/section \(zero length\)/.test((err as Error).message) || Object.keys(index).length === 0) throw err
      }
      await writeFile(this.file(v1, 'car.json'), JSON.stringify(index))
      this.indexes.set(v1, index)
      return index
    } catch {
      return null
    }
  }

  async carIndex(v1: string): Promise<CarIndex | null> {
    const known = this.indexes.get(v1)
    if (known) return known
    try {
      const index = JSON.parse(await readFile(this.file(v1, 'car.json'), 'utf8')) as CarIndex
      this.indexes.set(v1, index)
      return index
    } catch {
      return null
    }
  }

  /** One block of an indexed piece, or null when the piece has no such block or its data is gone. */
  async block(v1: string, cid: CID): Promise<Uint8Array | null> {
    const index = await this.carIndex(v1)
    const at = index?.[multihashKey(cid)]
    if (!at) return null
    try {
      const bytes = await this.read(v1, at[0], at[1])
      return bytes.length === at[1] ? bytes : null
    } catch {
      return null
    }
  }
}

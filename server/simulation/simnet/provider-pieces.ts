import { CID } from 'multiformats/cid'
import { createReadStream } from 'node:fs'
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createPieceHasher, MIN_PIECE_PAYLOAD, paddedPieceSize, padPieceCid } from '../../shared/piece.ts'
import { TransferFailure } from './provider-transfer.ts'

export class SimRetrievalError extends Error {
  override name = 'SimRetrievalError'
  constructor(
    readonly code: 'NOT_FOUND' | 'UNAVAILABLE',
    message: string,
  ) {
    super(message)
  }
}

type BlockIndex = Record<string, [offset: number, length: number]>

/**
 * The pieces the simulated providers keep on disk, under `<dir>/<providerId>/`:
 * each CAR as `<pieceCid>.car` beside `<pieceCid>.index.json`, where each of
 * its blocks lies. Faults (a provider that hangs, lies or loses) are the
 * simulated providers' to apply on top.
 */
export interface PieceStore {
  /**
   * Receives a deal's CAR (what `download` writes) into a file of its own,
   * checks its piece CID against the proposal's, and keeps it, indexed.
   * Throws a TransferFailure (PIECE_CID_MISMATCH) or what the download threw.
   */
  receive(o: {
    providerId: string
    pieceCid: string
    /** The proposal's PieceSize: CommP is padded to it. */
    pieceSize: number
    /** Names the file the bytes go to until checked, so that two transfers of one piece never share it. */
    transferId: string
    download(write: (position: number, bytes: Uint8Array) => Promise<void>): Promise<void>
    onProgress(bytesReceived: number): void
  }): Promise<void>
  /** The stored piece (CAR bytes). Throws SimRetrievalError when the provider does not have it. */
  readPiece(providerId: string, pieceCid: string, signal?: AbortSignal): AsyncIterable<Buffer>
  readBlock(providerId: string, pieceCid: string, blockCid: string): Promise<Uint8Array>
  /** The piece holding a block; null when none of the provider's pieces has it. */
  pieceOfBlock(providerId: string, blockCid: string): Promise<string | null>
  /** Drops every piece a provider stores. */
  drop(providerId: string): Promise<void>
}

export function createPieceStore(dir: string): PieceStore {
  const pieceDir = (providerId: string) => join(dir, providerId)
  const carFile = (providerId: string, pieceCid: string) => join(pieceDir(providerId), `${pieceCid}.car`)
  const indexFile = (providerId: string, pieceCid: string) => join(pieceDir(providerId), `${pieceCid}.index.json`)

  async function readIndex(providerId: string, pieceCid: string): Promise<BlockIndex> {
    try {
      return JSON.parse(await readFile(indexFile(providerId, pieceCid), 'utf8')) as BlockIndex
    } catch {
      throw new SimRetrievalError('NOT_FOUND', `Provider ${providerId} does not have piece ${pieceCid}`)
    }
  }

  return {
    async receive({ providerId, pieceCid, pieceSize, transferId, download, onProgress }) {
      const target = carFile(providerId, pieceCid)
      const temp = `${target}.${transferId}.tmp`
      try {
        await mkdir(pieceDir(providerId), { recursive: true })
        const out = await open(temp, 'w', 0o600)
        let received = 0
        // Where the file ends, and where its last non-zero byte does: a client pads small pieces with
        // zeros up to the provider's minimum size, which the simulation keeps sparse and hashes as zero subtrees.
        let fileEnd = 0
        let dataEnd = 0
        try {
          await download(async (position, bytes) => {
            fileEnd = Math.max(fileEnd, position + bytes.length)
            const nonZero = lastNonZero(bytes)
            if (nonZero >= 0) dataEnd = Math.max(dataEnd, position + nonZero + 1)
            let done = nonZero < 0 ? bytes.length : 0
            while (done < bytes.length) done += (await out.write(bytes, done, bytes.length - done, position + done)).bytesWritten
            received += bytes.length
            onProgress(received)
          })
          await out.truncate(fileEnd)
          await out.datasync()
        } finally {
          await out.close()
        }
        // boost storagemarket/deal_commp.go (and Curio's commP task alike): CommP over the received
        // file, padded with zero subtrees up to the proposal's PieceSize, must be the proposed piece CID.
        if ((await pieceCidOfFile(temp, fileEnd, dataEnd, pieceSize)) !== pieceCid) throw new TransferFailure('PIECE_CID_MISMATCH')
        await rename(temp, target)
        await writeFile(indexFile(providerId, pieceCid), JSON.stringify(await indexCar(target)))
      } catch (err) {
        await rm(temp, { force: true })
        throw err
      }
    },
    async *readPiece(providerId, pieceCid, signal) {
      await readIndex(providerId, pieceCid)
      yield* createReadStream(carFile(providerId, pieceCid), { signal }) as AsyncIterable<Buffer>
    },
    async readBlock(providerId, pieceCid, blockCid) {
      const entry = (await readIndex(providerId, pieceCid))[blockCid]
      if (!entry) throw new SimRetrievalError('NOT_FOUND', `Piece ${pieceCid} has no block ${blockCid}`)
      const fh = await open(carFile(providerId, pieceCid), 'r').catch(() => {
        throw new SimRetrievalError('NOT_FOUND', `Provider ${providerId} does not have piece ${pieceCid}`)
      })
      try {
        const bytes = new Uint8Array(entry[1])
        await fh.read(bytes, 0, entry[1], entry[0])
        return bytes
      } finally {
        await fh.close()
      }
    },
    async pieceOfBlock(providerId, blockCid) {
      const names = await readdir(pieceDir(providerId)).catch(() => [] as string[])
      for (const name of names) {
        if (!name.endsWith('.index.json')) continue
        const pieceCid = name.slice(0, -'.index.json'.length)
        if ((await readIndex(providerId, pieceCid).catch(() => ({}) as BlockIndex))[blockCid]) return pieceCid
      }
      return null
    },
    drop: (providerId) => rm(pieceDir(providerId), { recursive: true, force: true }),
  }
}

/**
 * CommP of a file's `fileSize` bytes, padded to `pieceSize`; null when it
 * cannot be (too small, larger than the piece). Only the bytes before
 * `dataEnd` are hashed: past it the file is zeros, whose fr32 form is zeros,
 * so the tree over the rest is all-zero subtrees, folded in (the same CID
 * as hashing every zero, without reading a GiB of them).
 */
async function pieceCidOfFile(path: string, fileSize: number, dataEnd: number, pieceSize: number): Promise<string | null> {
  const hasher = createPieceHasher()
  const end = Math.min(fileSize, Math.max(dataEnd, MIN_PIECE_PAYLOAD))
  if (end > 0) for await (const chunk of createReadStream(path, { end: end - 1 }) as AsyncIterable<Buffer>) hasher.update(chunk)
  try {
    const piece = hasher.digest()
    const natural = paddedPieceSize(fileSize)
    return natural > pieceSize ? null : padPieceCid(padPieceCid(piece.pieceCid, piece.pieceSize, natural), natural, pieceSize)
  } catch {
    return null
  }
}

const ZERO_BLOCK = Buffer.alloc(64 * 1024)

/** Index of the last non-zero byte, or -1 when every byte is zero (compared a block at a time, as memcmp). */
function lastNonZero(bytes: Uint8Array): number {
  for (let end = bytes.length; end > 0; end -= ZERO_BLOCK.length) {
    const start = Math.max(0, end - ZERO_BLOCK.length)
    if (Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).equals(ZERO_BLOCK.subarray(0, end - start))) continue
    for (let i = end - 1; i >= start; i--) if (bytes[i] !== 0) return i
  }
  return -1
}

/**
 * Where each block of a stored CAR v1 lies. A zero-length section ends the
 * CAR, as Boost's and Curio's indexers read it (go-car's
 * ZeroLengthSectionAsEOF): a client pads its transfer with zeros up to the
 * piece's size, and those zeros are no blocks.
 */
async function indexCar(path: string): Promise<BlockIndex> {
  const index: BlockIndex = {}
  const fh = await open(path, 'r')
  try {
    const size = (await fh.stat()).size
    const head = new Uint8Array(128)
    const varintAt = async (offset: number): Promise<[value: number, length: number]> => {
      const { bytesRead } = await fh.read(head, 0, 10, offset)
      let value = 0
      for (let i = 0; i < bytesRead; i++) {
        value += (head[i] & 0x7f) * 2 ** (7 * i)
        if (head[i] < 0x80) return [value, i + 1]
      }
      throw new Error(`CAR section length at ${offset} is not a varint`)
    }
    const [headerLength, headerVarint] = await varintAt(0)
    let offset = headerVarint + headerLength
    while (offset < size) {
      const [sectionLength, varint] = await varintAt(offset)
      if (sectionLength === 0) break
      const { bytesRead } = await fh.read(head, 0, Math.min(head.length, sectionLength), offset + varint)
      const [cid, rest] = CID.decodeFirst(head.subarray(0, bytesRead))
      const cidLength = bytesRead - rest.length
      index[cid.toString()] = [offset + varint + cidLength, sectionLength - cidLength]
      offset += varint + sectionLength
    }
    return index
  } finally {
    await fh.close()
  }
}

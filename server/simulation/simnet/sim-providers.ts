import { CID } from 'multiformats/cid'
import { randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createPieceHasher, MIN_PIECE_PAYLOAD, paddedPieceSize, padPieceCid } from '../../shared/piece.ts'
import type { DealProposal } from '../../shared/chain.ts'
import type { Simnet } from './index.ts'
import { providerProfile } from './provider-kind.ts'
import { faultyFetch, type FaultPlan } from './faults.ts'
import { boostTransfer, curioTransfer, TransferFailure } from './provider-transfer.ts'

/**
 * Faults a test or demo can give one simulated provider:
 * `refuse` every proposal; `timeout` never answer (proposals and retrievals
 * hang until aborted); `corrupt` serve altered bytes on retrieval (it lies
 * about the data); `lose` drop every piece it stores, now and later.
 */
export type ProviderFault = 'refuse' | 'timeout' | 'corrupt' | 'lose'

export interface SimTransfer {
  /** Where the provider fetches the CAR (HTTP GET). */
  url: string
  headers: Record<string, string>
  /** CAR bytes the client announced. */
  size: number
}

export type SimProposalResult = { accepted: true; proposalId: string } | { accepted: false; reason: string }

export type SimProposalState =
  | { state: 'transferring'; bytesReceived: number }
  /** `publishCid`: the PublishStorageDeals message the simulated chain names the deal by. */
  | { state: 'published'; dealId: number; publishCid: string }
  | { state: 'failed'; reason: string }
  /** The provider has no record of it (it restarted before publishing). */
  | { state: 'unknown' }

export interface SimRequestOptions {
  signal?: AbortSignal
}

/**
 * The simulated network's storage providers doing what Boost or Curio (see
 * provider-kind.ts) does for a client: take a proposal, fetch the CAR over
 * HTTP as that software fetches it, check it against the piece CID, publish
 * the deal on the simulated chain, keep the bytes under `<dir>/<providerId>/`
 * and serve them back (whole piece or one block).
 */
export interface SimulatedProviders {
  /** `proposalId`: the client's deal UUID (Boost's DealParams.DealUUID); a new one when not given. */
  propose(proposal: DealProposal, transfer: SimTransfer, options?: SimRequestOptions & { proposalId?: string }): Promise<SimProposalResult>
  proposalState(providerId: string, proposalId: string): SimProposalState
  /** The stored piece (CAR bytes). Throws SimRetrievalError when the provider does not have it. */
  retrievePiece(providerId: string, pieceCid: string, options?: SimRequestOptions): AsyncIterable<Uint8Array>
  /** One block of a stored piece, as a trustless gateway would serve `?format=raw`. */
  retrieveBlock(providerId: string, pieceCid: string, blockCid: string, options?: SimRequestOptions): Promise<Uint8Array>
  /** The piece holding a block, as a provider's index answers `/ipfs/<cid>`; null when none of its pieces has it. */
  pieceOfBlock(providerId: string, blockCid: string): Promise<string | null>
  setFault(providerId: string, fault: ProviderFault | null): void
  /** Aborts running transfers. */
  close(): Promise<void>
}

export class SimRetrievalError extends Error {
  override name = 'SimRetrievalError'
  constructor(
    readonly code: 'NOT_FOUND' | 'UNAVAILABLE',
    message: string,
  ) {
    super(message)
  }
}

export interface SimProvidersOptions {
  simnet: Simnet
  /** e.g. `<DATA_DIR>/simnet/providers` */
  dir: string
  /** Longest a CAR transfer may take. */
  transferTimeoutMs?: number
  fetch?: typeof fetch
  /** Pause between HTTP retries of a transfer (Curio sleeps 1 s; tests shorten it). */
  retryDelayMs?: number
  /** Seeded faults: some CAR downloads cut or paused part-way (faults.ts). */
  faults?: FaultPlan
}

type BlockIndex = Record<string, [offset: number, length: number]>

export function createSimulatedProviders(options: SimProvidersOptions): SimulatedProviders {
  const { simnet, dir } = options
  const doFetch = options.faults ? faultyFetch(options.fetch ?? fetch, options.faults) : (options.fetch ?? fetch)
  const transferTimeoutMs = options.transferTimeoutMs ?? 10 * 60_000
  const retryDelayMs = options.retryDelayMs ?? 1000
  const proposals = new Map<string, SimProposalState>()
  const faults = new Map<string, ProviderFault>()
  const running = new Set<AbortController>()

  const pieceDir = (providerId: string) => join(dir, providerId)
  const carFile = (providerId: string, pieceCid: string) => join(pieceDir(providerId), `${pieceCid}.car`)
  const indexFile = (providerId: string, pieceCid: string) => join(pieceDir(providerId), `${pieceCid}.index.json`)

  const hang = (signal?: AbortSignal) =>
    new Promise<never>((_, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
    })

  const dropPieces = (providerId: string) => rm(pieceDir(providerId), { recursive: true, force: true })

  /** Fetches the CAR as the provider's software does, verifies its piece CID, stores and indexes it, then publishes the deal. */
  async function transferAndPublish(proposalId: string, proposal: DealProposal, transfer: SimTransfer): Promise<void> {
    const providerId = proposal.Provider
    const pieceCid = proposal.PieceCID['/']
    const controller = new AbortController()
    running.add(controller)
    const timer = setTimeout(() => controller.abort(new Error('transfer timed out')), transferTimeoutMs)
    const target = carFile(providerId, pieceCid)
    const temp = `${target}.${proposalId}.tmp`
    try {
      await mkdir(pieceDir(providerId), { recursive: true })
      const out = await open(temp, 'w', 0o600)
      let received = 0
      // Where the file ends, and where its last non-zero byte does: a client pads small pieces with
      // zeros up to the provider's minimum size, which the simulation keeps sparse and hashes as zero subtrees.
      let fileEnd = 0
      let dataEnd = 0
      try {
        const download = providerProfile(providerId).kind === 'curio' ? curioTransfer : boostTransfer
        await download(transfer, {
          fetch: doFetch,
          signal: controller.signal,
          retryDelayMs,
          async write(position, bytes) {
            fileEnd = Math.max(fileEnd, position + bytes.length)
            const nonZero = lastNonZero(bytes)
            if (nonZero >= 0) dataEnd = Math.max(dataEnd, position + nonZero + 1)
            let done = nonZero < 0 ? bytes.length : 0
            while (done < bytes.length) done += (await out.write(bytes, done, bytes.length - done, position + done)).bytesWritten
            received += bytes.length
            proposals.set(proposalId, { state: 'transferring', bytesReceived: received })
          },
        })
        await out.truncate(fileEnd)
        await out.datasync()
      } finally {
        await out.close()
      }
      // boost storagemarket/deal_commp.go (and Curio's commP task alike): CommP over the received
      // file, padded with zero subtrees up to the proposal's PieceSize, must be the proposed piece CID.
      if ((await pieceCidOfFile(temp, fileEnd, dataEnd, proposal.PieceSize)) !== pieceCid) throw new TransferFailure('PIECE_CID_MISMATCH')
      await rename(temp, target)
      await writeFile(indexFile(providerId, pieceCid), JSON.stringify(await indexCar(target)))
      const client = (await simnet.lookupId(proposal.Client)) ?? proposal.Client
      const published = await simnet.proposeDeal({ ...proposal, Client: client })
      if (!published.accepted) throw new TransferFailure(published.reason)
      proposals.set(proposalId, { state: 'published', dealId: published.dealId, publishCid: published.publishCid })
      if (faults.get(providerId) === 'lose') await dropPieces(providerId)
    } catch (err) {
      await rm(temp, { force: true })
      const reason = controller.signal.aborted ? 'TRANSFER_TIMEOUT' : err instanceof TransferFailure ? err.message : 'TRANSFER_FAILED'
      proposals.set(proposalId, { state: 'failed', reason })
    } finally {
      clearTimeout(timer)
      running.delete(controller)
    }
  }

  async function readIndex(providerId: string, pieceCid: string): Promise<BlockIndex> {
    try {
      return JSON.parse(await readFile(indexFile(providerId, pieceCid), 'utf8')) as BlockIndex
    } catch {
      throw new SimRetrievalError('NOT_FOUND', `Provider ${providerId} does not have piece ${pieceCid}`)
    }
  }

  return {
    async propose(proposal, transfer, opts = {}) {
      const providerId = proposal.Provider
      const fault = faults.get(providerId)
      if (fault === 'timeout') return hang(opts.signal)
      if (fault === 'refuse') return { accepted: false, reason: 'BUSY' }
      const terms = await simnet.providerTerms(providerId)
      if (!terms) return { accepted: false, reason: 'PROVIDER_NOT_FOUND' }
      if (!terms.online) return { accepted: false, reason: 'SERVICE_UNAVAILABLE' }
      if (!terms.transferTypes.includes('http')) return { accepted: false, reason: 'UNSUPPORTED_TRANSFER_PROTOCOL' }
      if (proposal.PieceSize < terms.minPieceSize || proposal.PieceSize > terms.maxPieceSize)
        return { accepted: false, reason: 'PIECE_SIZE_NOT_ACCEPTED' }
      if (proposal.StartEpoch <= simnet.headEpoch()) return { accepted: false, reason: 'START_EPOCH_TOO_EARLY' }
      // As Boost does: the provider collateral must lie within the market's bounds for this piece.
      const bounds = await simnet.collateralBounds(proposal.PieceSize, proposal.VerifiedDeal)
      const collateral = BigInt(proposal.ProviderCollateral)
      if (collateral < bounds.min || collateral > bounds.max)
        return { accepted: false, reason: `proposed provider collateral ${collateral} should be between ${bounds.min} and ${bounds.max}` }
      const refusal =
        priceRefusal(proposal, terms) ?? (providerProfile(providerId).kind === 'curio' ? curioSizeRefusal(proposal, transfer) : null)
      if (refusal) return { accepted: false, reason: refusal }
      const proposalId = opts.proposalId ?? randomUUID()
      if (proposals.has(proposalId)) return { accepted: false, reason: 'DEAL_UUID_ALREADY_USED' }
      proposals.set(proposalId, { state: 'transferring', bytesReceived: 0 })
      void transferAndPublish(proposalId, proposal, transfer)
      return { accepted: true, proposalId }
    },
    proposalState(_providerId, proposalId) {
      const state = proposals.get(proposalId) ?? { state: 'unknown' }
      // After publishing, the status still tells the client when sealing failed (Boost's deal status carries the error).
      if (state.state !== 'published') return state
      const failsAt = simnet.sealingFailsAt(state.dealId)
      return failsAt !== null && simnet.headEpoch() >= failsAt ? { state: 'failed', reason: 'SEALING_FAILED' } : state
    },
    retrievePiece(providerId, pieceCid, opts = {}) {
      const fault = faults.get(providerId)
      return (async function* () {
        if (fault === 'timeout') await hang(opts.signal)
        await readIndex(providerId, pieceCid)
        const stream = createReadStream(carFile(providerId, pieceCid), { signal: opts.signal })
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          yield fault === 'corrupt' ? corrupt(chunk) : new Uint8Array(chunk)
        }
      })()
    },
    async retrieveBlock(providerId, pieceCid, blockCid, opts = {}) {
      if (faults.get(providerId) === 'timeout') await hang(opts.signal)
      const entry = (await readIndex(providerId, pieceCid))[blockCid]
      if (!entry) throw new SimRetrievalError('NOT_FOUND', `Piece ${pieceCid} has no block ${blockCid}`)
      const fh = await open(carFile(providerId, pieceCid), 'r').catch(() => {
        throw new SimRetrievalError('NOT_FOUND', `Provider ${providerId} does not have piece ${pieceCid}`)
      })
      try {
        const bytes = new Uint8Array(entry[1])
        await fh.read(bytes, 0, entry[1], entry[0])
        return faults.get(providerId) === 'corrupt' ? corrupt(bytes) : bytes
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
    setFault(providerId, fault) {
      if (fault) faults.set(providerId, fault)
      else faults.delete(providerId)
      if (fault === 'lose') void dropPieces(providerId)
    },
    async close() {
      for (const c of running) c.abort(new Error('closing'))
    },
  }
}

const GiB = 2n ** 30n

/**
 * boost storagemarket/deal_acceptance.go validateAsk and curio market/mk12/mk12.go
 * validateAsk: the ask's price (verified or not) is per GiB per epoch; the
 * least a proposal may pay per epoch is price × PieceSize / 2^30, divided
 * as integers (big.Div truncates).
 */
export function minimumPricePerEpoch(askPricePerGiB: bigint, pieceSize: number): bigint {
  return (askPricePerGiB * BigInt(pieceSize)) / GiB
}

function priceRefusal(p: DealProposal, terms: { verifiedPrice: string; unverifiedPrice: string }): string | null {
  const min = minimumPricePerEpoch(BigInt(p.VerifiedDeal ? terms.verifiedPrice : terms.unverifiedPrice), p.PieceSize)
  const offered = BigInt(p.StoragePricePerEpoch)
  return offered < min ? `storage price per epoch less than asking price: ${offered} < ${min}` : null
}

/**
 * curio market/mk12/mk12.go processDeal: an online deal's PieceSize must be
 * exactly the padded size of Transfer.Size (go-padreader PaddedSize(size).Padded()),
 * so a client may not ask for a larger piece than its CAR fills.
 */
function curioSizeRefusal(p: DealProposal, transfer: SimTransfer): string | null {
  const natural = paddedPieceSize(transfer.size)
  return p.PieceSize === natural ? null : `deal proposal piece size ${p.PieceSize} doesn't match padded piece size ${natural}`
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

/** Flips one bit in the middle: the smallest lie a verifier must still catch. */
function corrupt(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes)
  if (copy.length > 0) copy[copy.length >> 1] ^= 0x01
  return copy
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

import type { Chain } from '@filoz/synapse-core/chains'
import * as Erc20 from '@filoz/synapse-core/erc20'
import * as Pay from '@filoz/synapse-core/pay'
import * as Piece from '@filoz/synapse-core/piece'
import { getPDPProvider } from '@filoz/synapse-core/sp-registry'
import { createPieceUrlPDP } from '@filoz/synapse-core/utils'
import { CommitError, StoreError, Synapse } from '@filoz/synapse-sdk'
import {
  formatUnits,
  http,
  isAddressEqual,
  maxUint256,
  parseEventLogs,
  toHex,
  TransactionReceiptNotFoundError,
  type Address,
  type Hash,
  type LocalAccount,
} from 'viem'
import { NetworkError } from '../errors.ts'
import { blockBytes, pieceHead, retrievalGet } from '../http-retrieval.ts'

/** One copy of a piece on one PDP provider: the piece `pieceId` of data set `dataSetId`. */
export interface FocCopy {
  providerId: number
  dataSetId: bigint
  pieceId: bigint
  /** Where the provider serves the piece (`<serviceURL>/piece/<pieceCid>`). */
  retrievalUrl: string
  /** The epoch the piece was added on chain: a proof after it covers the piece. */
  addedEpoch: number
}

export interface FocStored {
  pieceCid: string
  size: number
  copies: FocCopy[]
  /** Providers tried that hold no copy, and why. */
  failures: { providerId: number; reason: string }[]
}

/** Whether the account can pay for storing `dataSize` more bytes, and what it would take. */
export interface FocFunding {
  ready: boolean
  /** USDFC (18 decimals) to deposit into Filecoin Pay first. */
  depositNeeded: bigint
  /** Whether the warm storage service still needs the payer's operator approval. */
  needsApproval: boolean
  /** What the new bytes add to the payment rate, per epoch. */
  ratePerEpoch: bigint
}

/** The payer's standing in Filecoin Pay (synapse-core getAccountSummary). */
export interface FocAccount {
  walletUsdfc: bigint
  walletFil: bigint
  funds: bigint
  availableFunds: bigint
  lockupRatePerEpoch: bigint
  /** Epochs until the funds no longer cover the lockup rate (the SDK's runway). */
  runwayEpochs: bigint
  epoch: bigint
}

/** Where a copy stands on chain: the data set's proving, as PDPVerifier keeps it. */
export interface FocCopyProof {
  dataSetLive: boolean
  pieceLive: boolean
  /** Whether a proof covering the piece has passed (in one of the latest proving periods since it was added). */
  proved: boolean
  /** The latest closed proving periods in a row with no proof (up to a few): a provider that stopped proving. */
  missedPeriods: number
  /** The epoch of the last accepted proof (or the data set's creation, before any). */
  lastProvenEpoch: number
  /** When the next challenge window opens; null when none is scheduled. */
  nextChallengeEpoch: number | null
  /** The warm storage service's proving terms (getPDPConfig). */
  maxProvingPeriod: number
  challengeWindow: number
}

/** What an add transaction did: the copy it made, or that it reverted or added something else, or not in a block yet. */
export type FocAddOutcome = { status: 'added'; copy: FocCopy } | { status: 'failed' } | { status: 'pending' }

export interface FocStoreOptions {
  copies: number
  /** Providers that must not get a copy (they hold one already, or failed it). */
  excludeProviderIds?: number[]
  /** Data set metadata: pieces with the same metadata share a data set per provider. */
  metadata?: Record<string, string>
  /** The piece's metadata (e.g. `ipfsRootCID`, the CAR's root, for providers that index it). */
  pieceMetadata?: Record<string, string>
  /** The piece CID v2 of `data` when the caller knows it: the SDK then does not hash the bytes again (the provider still checks). */
  pieceCid?: string
  signal?: AbortSignal
  onProgress?: (event: FocStoreEvent) => void
}

export type FocStoreEvent =
  | { kind: 'uploaded'; bytes: number }
  | { kind: 'stored'; providerId: number }
  | { kind: 'adding'; providerId: number; txHash: Hash }
  | { kind: 'added'; providerId: number; dataSetId: bigint }
  | { kind: 'copy-failed'; providerId: number; reason: string }

/** The gateway's port to the Filecoin Onchain Cloud: PDP copies through the Synapse SDK, unchanged. */
export interface FocClient {
  /** The payer: the wallet key's FEVM account. */
  readonly address: Address
  readonly chain: Chain
  funding(dataSize: number): Promise<FocFunding>
  /** Deposits `amount` USDFC into Filecoin Pay (with a permit) and approves the warm storage service when needed. */
  fund(amount: bigint): Promise<Hash>
  store(data: Uint8Array | ReadableStream<Uint8Array>, options: FocStoreOptions): Promise<FocStored>
  copyProof(copy: Pick<FocCopy, 'dataSetId' | 'pieceId' | 'addedEpoch'>): Promise<FocCopyProof>
  /**
   * The copy an add transaction made of `pieceCid` (a v2 piece CID) on
   * `providerId`, read from its receipt (PDPVerifier's PiecesAdded): for a
   * copy whose `store` answer was lost, when the process stopped while the
   * SDK waited for the add.
   */
  addedCopy(add: { txHash: Hash; providerId: number; pieceCid: string }): Promise<FocAddOutcome>
  account(): Promise<FocAccount>
  /**
   * Asks the copy's provider to remove the piece from our data set (it is no
   * longer paid for from the next proving period): the SDK signs the removal,
   * the provider sends it. Returns the transaction.
   */
  removeCopy(copy: Pick<FocCopy, 'providerId' | 'dataSetId' | 'pieceId'>): Promise<Hash>
  /** Whether a piece is still in its data set (`live`), already scheduled for removal at the next proving period, or `gone`. */
  removalState(copy: Pick<FocCopy, 'dataSetId' | 'pieceId'>): Promise<'live' | 'scheduled' | 'gone'>
  /** The first `size` bytes of a copy's piece as its provider serves it (`GET <retrievalUrl>`). */
  retrievePiece(retrievalUrl: string, size: number, signal: AbortSignal): AsyncIterable<Uint8Array>
  /** One block of a copy's CAR from its provider's trustless gateway (`GET /ipfs/<cid>`, raw); the caller checks it. */
  retrieveBlock(retrievalUrl: string, blockCid: string, signal: AbortSignal): Promise<Uint8Array>
}

export interface FocClientOptions {
  chain: Chain
  account: LocalAccount
  /** Names our data sets apart from other applications' of the same wallet (the SDK's `source`). */
  source?: string
  /** Per JSON-RPC request. */
  rpcTimeoutMs?: number
}

/** The innermost message of an error and its causes. */
function rootMessage(error: unknown): string {
  let e: unknown = error
  while (e instanceof Error && e.cause instanceof Error) e = e.cause
  return e instanceof Error ? ((e as { shortMessage?: string }).shortMessage ?? e.message) : String(error)
}

/** Whether the error or one of its causes is an abort (the caller's signal, or a timeout). */
function aborted(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e.name === 'AbortError' || e.name === 'TimeoutError') return true
  return false
}

/** The wallet cannot pay: it holds less USDFC than it is asked to deposit. Not a network failure: a person must act. */
export class FocFundsError extends Error {
  override name = 'FocFundsError'
}

/** The SDK's failures as the network's closed set of codes (server/network/errors.ts). */
export function focNetworkError(error: unknown): NetworkError | FocFundsError {
  if (error instanceof NetworkError || error instanceof FocFundsError) return error
  const reason = rootMessage(error).slice(0, 500)
  const provider = error instanceof StoreError || error instanceof CommitError ? error.providerId : undefined
  if (aborted(error)) return new NetworkError('TIMED_OUT', reason, { cause: error, provider })
  if (/ECONNREFUSED|ECONNRESET|fetch failed|socket hang up|HTTP request failed/i.test(reason))
    return new NetworkError('UNREACHABLE', reason, { cause: error, provider })
  if (error instanceof StoreError)
    return new NetworkError('REFUSED', `provider refused the piece: ${reason}`, { cause: error, providerReason: reason, provider })
  if (error instanceof CommitError)
    return new NetworkError('REJECTED_BY_CHAIN', `the piece was not added on chain: ${reason}`, { cause: error, provider })
  return new NetworkError('PROTOCOL_ERROR', reason, { cause: error })
}

/** `work`, or the signal's reason as soon as it fires. */
function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work
  signal.throwIfAborted()
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/** How many of the latest proving periods a copy's proofs are looked up in. */
const RECENT_PERIODS = 4

export function createFocClient(options: FocClientOptions): FocClient {
  const synapse = Synapse.create({
    chain: options.chain,
    account: options.account,
    transport: http(options.chain.rpcUrls.default.http[0], { timeout: options.rpcTimeoutMs ?? 30_000, retryCount: 2 }),
    source: options.source ?? 'nextcloud-filecoin-gateway',
  })
  const client = synapse.client
  const pdp = options.chain.contracts.pdp
  const read = <T>(contract: { address: Address; abi: unknown }, functionName: string, args: unknown[] = []) =>
    client.readContract({ address: contract.address, abi: contract.abi, functionName, args } as never) as Promise<T>

  const guarded =
    <A extends unknown[], R>(work: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await work(...args)
      } catch (error) {
        throw focNetworkError(error)
      }
    }

  return {
    address: options.account.address,
    chain: options.chain,

    funding: guarded(async (dataSize) => {
      const { costs } = await synapse.storage.prepare({ dataSize: BigInt(dataSize) })
      return {
        ready: costs.ready,
        depositNeeded: costs.depositNeeded,
        needsApproval: costs.needsFwssMaxApproval,
        ratePerEpoch: costs.rate.perEpoch,
      }
    }),

    fund: guarded(async (amount) => {
      const held = await synapse.payments.walletBalance({ token: 'USDFC' })
      if (held < amount)
        throw new FocFundsError(
          `the wallet ${options.account.address} holds ${formatUnits(held, 18)} USDFC; ${formatUnits(amount, 18)} USDFC is to be deposited`,
        )
      const confirmed = async (hash: Hash) => {
        const receipt = await client.waitForTransactionReceipt({ hash })
        if (receipt.status !== 'success') throw new NetworkError('REJECTED_BY_CHAIN', `transaction ${hash} failed on chain`)
        return hash
      }
      if (!(await Pay.isFwssMaxApproved(client, { clientAddress: options.account.address }))) {
        return confirmed(await Pay.fund(client, { amount, needsFwssMaxApproval: true }))
      }
      // Approved already: the SDK would deposit with a permit, which looks its chain up by id
      // (synapse-core 0.5.2 pay/deposit-with-permit.ts) and so signs for address zero on a devnet.
      // An allowance and a plain deposit work the same on every chain.
      await confirmed(await Erc20.approve(client, { amount, spender: options.chain.contracts.filecoinPay.address }))
      return confirmed(await Pay.deposit(client, { amount }))
    }),

    store: guarded(async (data, o) => {
      const report = o.onProgress ?? (() => undefined)
      const addTransactions = new Map<number, Hash>()
      // The provider the bytes go to first, until they are stored there: the one a stalled upload waits on.
      let primary: bigint | undefined
      let stored = false
      // The SDK waits out its own status polls (5 minutes each) without looking at the signal: the caller's
      // signal ends the wait here, and whatever the SDK still does is left to finish on its own.
      const uploading = abortable(
        synapse.storage.upload(data, {
          copies: o.copies,
          excludeProviderIds: o.excludeProviderIds?.map(BigInt),
          metadata: o.metadata,
          pieceMetadata: o.pieceMetadata,
          pieceCid: o.pieceCid === undefined ? undefined : Piece.parse(o.pieceCid),
          signal: o.signal,
          callbacks: {
            onProviderSelected: (provider) => (primary ??= provider.id),
            onProgress: (bytes) => report({ kind: 'uploaded', bytes }),
            onStored: (providerId) => {
              stored = true
              report({ kind: 'stored', providerId: Number(providerId) })
            },
            onPiecesAdded: (txHash, providerId) => {
              addTransactions.set(Number(providerId), txHash)
              report({ kind: 'adding', providerId: Number(providerId), txHash })
            },
            onPiecesConfirmed: (dataSetId, providerId) => report({ kind: 'added', providerId: Number(providerId), dataSetId }),
            onCopyFailed: (providerId, _piece, error) =>
              report({ kind: 'copy-failed', providerId: Number(providerId), reason: rootMessage(error) }),
          },
        }),
        o.signal,
      )
      const result = await uploading.catch((error: unknown) => {
        const failure = focNetworkError(error)
        // Cut short before the first provider had the bytes: that provider is the one that failed.
        if (failure instanceof NetworkError && failure.provider === undefined && primary !== undefined && !stored) {
          throw new NetworkError(failure.code, failure.message, {
            cause: error,
            providerReason: failure.providerReason,
            provider: String(primary),
          })
        }
        throw failure
      })
      const head = Number(await client.getBlockNumber({ cacheTime: 0 }))
      const addedEpoch = async (providerId: number) => {
        const hash = addTransactions.get(providerId)
        const receipt = hash ? await client.getTransactionReceipt({ hash }).catch(() => null) : null
        return receipt ? Number(receipt.blockNumber) : head
      }
      const copies = await Promise.all(
        result.copies.map(async (c) => ({
          providerId: Number(c.providerId),
          dataSetId: c.dataSetId,
          pieceId: c.pieceId,
          retrievalUrl: c.retrievalUrl,
          addedEpoch: await addedEpoch(Number(c.providerId)),
        })),
      )
      return {
        pieceCid: result.pieceCid.toString(),
        size: result.size,
        copies,
        failures: result.failedAttempts.map((f) => ({ providerId: Number(f.providerId), reason: f.error })),
      }
    }),

    copyProof: guarded(async ({ dataSetId, pieceId, addedEpoch }) => {
      const { fwss, fwssView } = options.chain.contracts
      const head = await client.getBlockNumber({ cacheTime: 0 })
      const [dataSetLive, pieceLive, lastProven, nextChallenge, config, addedPeriod, currentPeriod] = await Promise.all([
        read<boolean>(pdp, 'dataSetLive', [dataSetId]),
        read<boolean>(pdp, 'pieceLive', [dataSetId, pieceId]),
        read<bigint>(pdp, 'getDataSetLastProvenEpoch', [dataSetId]).catch(() => 0n),
        read<bigint>(pdp, 'getNextChallengeEpoch', [dataSetId]).catch(() => 0n),
        read<readonly [bigint, bigint, bigint, bigint]>(fwssView, 'getPDPConfig'),
        read<bigint>(fwss, 'getProvingPeriodForEpoch', [dataSetId, BigInt(addedEpoch)]),
        read<bigint>(fwss, 'getProvingPeriodForEpoch', [dataSetId, head]),
      ])
      // FWSS counts proofs per proving period (provenPeriods). A piece added in period k is first
      // challenged in period k + 1, once the provider's nextProvingPeriod takes it into the range;
      // one added before proving started, from period 0.
      let proved = false
      let missedPeriods = 0
      if (dataSetLive && currentPeriod !== maxUint256) {
        const first = addedPeriod === maxUint256 ? 0n : addedPeriod + 1n
        const periods: bigint[] = []
        for (let p = currentPeriod; p >= first && periods.length < RECENT_PERIODS; p--) periods.push(p)
        const proven = await Promise.all(periods.map((p) => read<boolean>(fwssView, 'provenPeriods', [dataSetId, p])))
        proved = proven.some(Boolean)
        // Closed periods (all but the current one) without a proof, the latest first, in a row.
        for (const wasProven of proven.slice(1)) {
          if (wasProven) break
          missedPeriods++
        }
      }
      return {
        dataSetLive,
        pieceLive: dataSetLive && pieceLive,
        proved: proved && pieceLive,
        missedPeriods,
        lastProvenEpoch: Number(lastProven),
        nextChallengeEpoch: nextChallenge === 0n ? null : Number(nextChallenge),
        maxProvingPeriod: Number(config[0]),
        challengeWindow: Number(config[1]),
      }
    }),

    addedCopy: guarded(async ({ txHash, providerId, pieceCid }): Promise<FocAddOutcome> => {
      const receipt = await client.getTransactionReceipt({ hash: txHash }).catch((error: unknown) => {
        if (error instanceof TransactionReceiptNotFoundError) return null
        throw error
      })
      if (!receipt) return { status: 'pending' }
      if (receipt.status !== 'success') return { status: 'failed' }
      const wanted = toHex(Piece.parse(pieceCid).bytes)
      for (const added of parseEventLogs({ abi: pdp.abi, logs: receipt.logs, eventName: 'PiecesAdded' })) {
        if (!isAddressEqual(added.address, pdp.address)) continue
        const at = added.args.pieceCids.findIndex((cid) => cid.data.toLowerCase() === wanted)
        if (at < 0) continue
        const provider = await getPDPProvider(client, { providerId: BigInt(providerId) })
        if (!provider) throw new NetworkError('PROTOCOL_ERROR', `PDP provider ${providerId} is not in the registry`)
        return {
          status: 'added',
          copy: {
            providerId,
            dataSetId: added.args.setId,
            pieceId: added.args.pieceIds[at],
            addedEpoch: Number(receipt.blockNumber),
            retrievalUrl: createPieceUrlPDP({ cid: pieceCid, serviceURL: provider.pdp.serviceURL }),
          },
        }
      }
      return { status: 'failed' }
    }),

    account: guarded(async () => {
      const [summary, walletUsdfc, walletFil] = await Promise.all([
        Pay.getAccountSummary(client, { address: options.account.address }),
        synapse.payments.walletBalance({ token: 'USDFC' }),
        synapse.payments.walletBalance({ token: 'FIL' }),
      ])
      return {
        walletUsdfc,
        walletFil,
        funds: summary.funds,
        availableFunds: summary.availableFunds,
        lockupRatePerEpoch: summary.lockupRatePerEpoch,
        runwayEpochs: summary.runwayInEpochs,
        epoch: summary.epoch,
      }
    }),

    removeCopy: guarded(async ({ providerId, dataSetId, pieceId }) => {
      const context = await synapse.storage.createContext({ providerId: BigInt(providerId), dataSetId })
      return context.deletePiece({ piece: pieceId })
    }),

    removalState: guarded(async ({ dataSetId, pieceId }) => {
      const [dataSetLive, pieceLive] = await Promise.all([
        read<boolean>(pdp, 'dataSetLive', [dataSetId]),
        read<boolean>(pdp, 'pieceLive', [dataSetId, pieceId]),
      ])
      if (!dataSetLive || !pieceLive) return 'gone'
      // PDPVerifier refuses to schedule a piece twice ("Piece ID already scheduled for removal"): asked first.
      const scheduled = await read<readonly bigint[]>(pdp, 'getScheduledRemovals', [dataSetId])
      return scheduled.includes(pieceId) ? 'scheduled' : 'live'
    }),

    retrievePiece(retrievalUrl, size, signal) {
      return (async function* () {
        yield* pieceHead(
          await retrievalGet(retrievalUrl, 'application/octet-stream', signal, new URL(retrievalUrl).host),
          size,
          new URL(retrievalUrl).host,
        )
      })()
    },

    async retrieveBlock(retrievalUrl, blockCid, signal) {
      // Curio serves the piece under <serviceURL>/piece/<cid> and its indexed CARs' blocks under <serviceURL>/ipfs/<cid>.
      const base = retrievalUrl.replace(/\/piece\/[^/]+$/, '')
      const who = new URL(retrievalUrl).host
      return blockBytes(await retrievalGet(`${base}/ipfs/${blockCid}?format=raw`, 'application/vnd.ipld.raw', signal, who), who, blockCid)
    },
  }
}

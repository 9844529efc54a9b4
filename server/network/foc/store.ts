import * as Piece from '@filoz/synapse-core/piece'
import type { UploadResult } from '@filoz/synapse-sdk'
import { formatUnits, type Hash } from 'viem'
import { NetworkError } from '../errors.ts'
import { filecoinPayAbi } from './abi.ts'
import type { FocContext } from './context.ts'
import { creationLockup } from './cost.ts'
import { FocFundsError, focNetworkError, rootMessage } from './errors.ts'
import { priceList } from './funding.ts'
import type { FocCopy, FocStored, FocStoreOptions } from './types.ts'

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

/**
 * Uploads `data` to `o.copies` PDP providers and has each add it to our data
 * set there (synapse.storage.upload), reporting each step through
 * `o.onProgress`; resolves with the copies made and the providers that failed.
 */
export async function store(
  { synapse, client, chain, payer }: Pick<FocContext, 'synapse' | 'client' | 'chain' | 'payer'>,
  data: Uint8Array | ReadableStream<Uint8Array>,
  o: FocStoreOptions,
): Promise<FocStored> {
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
        onCopyComplete: (providerId) => report({ kind: 'pulled', providerId: Number(providerId) }),
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
  const result = await uploading.catch(async (error: unknown) => {
    const failure = focNetworkError(error, chain.rpcUrls.default.http[0])
    const short = await creationShortOfFunds({ client, chain, payer }, error, failure)
    if (short) throw short
    // Cut short before the first provider had the bytes: that provider is the one that failed (unless the chain's node did).
    if (failure instanceof NetworkError && !failure.chainNode && failure.provider === undefined && primary !== undefined && !stored) {
      throw new NetworkError(failure.code, failure.message, {
        cause: error,
        providerReason: failure.providerReason,
        provider: String(primary),
      })
    }
    throw failure
  })
  return {
    pieceCid: result.pieceCid.toString(),
    size: result.size,
    copies: await copiesOf(client, result, addTransactions),
    failures: result.failedAttempts.map((f) => ({ providerId: Number(f.providerId), reason: f.error })),
  }
}

/** Whether the error or one of its causes is the SDK's failure to have a provider create a data set. */
function creatingDataSet(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e.name === 'CreateDataSetError') return true
  return false
}

/**
 * A data set creation the chain refused with no reason the client can read: Curio answers a
 * reverted createDataSet as "chain: execution reverted", the revert data left behind (its
 * httpServerError gives the node's message only). When the payer's available funds in Filecoin Pay
 * are below what FWSS 1.3.1 requires before a data set's rails open (Rails.sol
 * validatePayerOperatorApprovalAndFunds, InsufficientLockupFunds), that is the refusal: said as the
 * funds problem it is, with what to deposit. Undefined otherwise (or when the chain cannot be read).
 */
async function creationShortOfFunds(
  c: Pick<FocContext, 'client' | 'chain' | 'payer'>,
  error: unknown,
  failure: Error,
): Promise<FocFundsError | undefined> {
  if (!(failure instanceof NetworkError) || failure.code !== 'REJECTED_BY_CHAIN' || failure.revert?.errorName || !creatingDataSet(error))
    return undefined
  try {
    const [prices, [, , available]] = await Promise.all([
      priceList(c),
      c.client.readContract({
        address: c.chain.contracts.filecoinPay.address,
        abi: filecoinPayAbi,
        functionName: 'getAccountInfoIfSettled',
        args: [c.chain.contracts.usdfc.address, c.payer],
      }),
    ])
    const required = creationLockup(prices)
    if (available >= required) return undefined
    const usdfc = (n: bigint) => `${formatUnits(n, 18)} USDFC`
    return new FocFundsError(
      `a new data set was refused (warm storage service InsufficientLockupFunds): creating one needs ${usdfc(required)} available in Filecoin Pay ` +
        `(its lifecycle reserve and 30 days of its fee), the account has ${usdfc(available)}: deposit at least ${usdfc(required - available)} more`,
      { cause: failure, shortBy: required - available },
    )
  } catch {
    return undefined
  }
}

/**
 * The copies an upload made, each with the epoch its add transaction landed
 * in (`addTransactions`, by provider), or the chain's head when its receipt
 * cannot be read: a proof after it still covers the piece.
 */
async function copiesOf(client: FocContext['client'], result: UploadResult, addTransactions: Map<number, Hash>): Promise<FocCopy[]> {
  const head = Number(await client.getBlockNumber({ cacheTime: 0 }))
  const addedEpoch = async (providerId: number) => {
    const hash = addTransactions.get(providerId)
    const receipt = hash ? await client.getTransactionReceipt({ hash }).catch(() => null) : null
    return receipt ? Number(receipt.blockNumber) : head
  }
  return Promise.all(
    result.copies.map(async (c) => ({
      providerId: Number(c.providerId),
      dataSetId: c.dataSetId,
      pieceId: c.pieceId,
      retrievalUrl: c.retrievalUrl,
      addedEpoch: await addedEpoch(Number(c.providerId)),
    })),
  )
}

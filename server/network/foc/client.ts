import type { Chain } from '@filoz/synapse-core/chains'
import { Synapse } from '@filoz/synapse-sdk'
import { createPublicClient, http, isAddressEqual, type Address, type Hash, type LocalAccount } from 'viem'
import type { FocContracts } from '../../shared/foc-contracts.ts'
import type { ChainClock } from '../../shared/epochs.ts'
import type { Logger } from '../../shared/logger.ts'
import { account } from './account.ts'
import { addedCopy } from './added-copy.ts'
import { focChain } from './chain.ts'
import { keptClock, readChainClock, viemBlocks } from './chain-clock.ts'
import type { FocContext } from './context.ts'
import { copyProof } from './copy-proof.ts'
import { dataSets } from './data-sets.ts'
import {
  CONTRACT_NAMES,
  FocDeploymentError,
  readFocDeployment,
  readFwssAddresses,
  type FocAnchors,
  type FocDeployment,
} from './deployment.ts'
import { guarded } from './errors.ts'
import { fund } from './fund.ts'
import { funding } from './funding.ts'
import { pieceCopies } from './piece-copies.ts'
import { removalState, removeCopy } from './removal.ts'
import { retrieveBlock, retrievePiece } from './retrieval.ts'
import { store } from './store.ts'
import { terminateDataSet } from './terminate.ts'
import type {
  FocAccount,
  FocAddOutcome,
  FocCopy,
  FocCopyProof,
  FocDataSet,
  FocFunding,
  FocFundingRequest,
  FocStored,
  FocStoreOptions,
} from './types.ts'

// The verbs are in files of their own beside this one, each given only the context it uses (context.ts);
// the client's users import all they need from here.
export { FocFundsError, focNetworkError } from './errors.ts'
export { FocDeploymentError, type FocAnchors, type FocDeployment } from './deployment.ts'
export type {
  FocAccount,
  FocAddOutcome,
  FocCopy,
  FocCopyProof,
  FocDataSet,
  FocFunding,
  FocFundingRequest,
  FocStored,
  FocStoreEvent,
  FocStoreOptions,
} from './types.ts'

/**
 * The gateway's port to the Filecoin Onchain Cloud: PDP copies through the Synapse SDK, unchanged,
 * except where SDK 0.41 is wrong for the deployed GA contracts: the cost model (cost.ts,
 * funding.ts), the data set reads (data-sets.ts, and the view ABI the SDK is given, chain.ts) and
 * the permit deposit (fund.ts) are done here from the contracts' ABIs (abi.ts).
 */
export interface FocClient {
  /** The payer: the wallet key's FEVM account. */
  readonly address: Address
  /** The chain as the SDK is given it, with the contracts FWSS names now. */
  readonly chain: Chain
  /** Where the contracts are and which versions, as last read from FWSS. */
  deployment(): FocDeployment
  /**
   * The FEVM chain's own clock (chain-clock.ts): when its epochs happen, from its blocks, which need not
   * be the deal market's chain's. Read once, then kept: a chain's genesis and block time do not change.
   */
  chainClock(): Promise<ChainClock>
  /** The chain's head epoch now (eth_blockNumber, never cached). */
  chainHead(): Promise<number>
  /** Whether the account can pay for `dataSize` more bytes in the copies `request` describes, by GA's charges, and what to deposit. */
  funding(dataSize: number, request?: FocFundingRequest): Promise<FocFunding>
  /** Deposits `amount` USDFC into Filecoin Pay and approves the warm storage service when needed (no permit). */
  fund(amount: bigint): Promise<Hash>
  /** The payer's data sets with the warm storage service, decoded as GA's view has them (13 fields). */
  clientDataSets(): Promise<FocDataSet[]>
  store(data: Uint8Array | ReadableStream<Uint8Array>, options: FocStoreOptions): Promise<FocStored>
  copyProof(copy: Pick<FocCopy, 'dataSetId' | 'pieceId' | 'addedEpoch'>): Promise<FocCopyProof>
  /**
   * The copy an add transaction made of `pieceCid` (a v2 piece CID) on
   * `providerId`: whether it went through from its receipt, the copy from
   * the pieces of our data sets with that provider (no event is read). For
   * a copy whose `store` answer was lost, when the process stopped while
   * the SDK waited for the add.
   */
  addedCopy(add: { txHash: Hash; providerId: number; pieceCid: string }): Promise<FocAddOutcome>
  /**
   * Every live copy of `pieceCid` (a v2 piece CID) in our data sets, on any
   * provider, not scheduled for removal: found by its CID on chain
   * (PDPVerifier findPieceIdsByCid), whatever the gateway recorded. For adds
   * whose answer a stop lost, and before a group is uploaded again.
   */
  pieceCopies(piece: { pieceCid: string }): Promise<FocCopy[]>
  account(): Promise<FocAccount>
  /**
   * Asks the copy's provider to remove the piece from our data set (it is no
   * longer paid for from the next proving period): the SDK signs the removal,
   * the provider sends it. Returns the transaction.
   */
  removeCopy(copy: Pick<FocCopy, 'providerId' | 'dataSetId' | 'pieceId'>): Promise<Hash>
  /** Whether a piece is still in its data set (`live`), already scheduled for removal at the next proving period, or `gone`. */
  removalState(copy: Pick<FocCopy, 'dataSetId' | 'pieceId'>): Promise<'live' | 'scheduled' | 'gone'>
  /**
   * Ends a data set's payments as the payer (FWSS terminateService), for a
   * provider that is gone: its rail stops paying at its end epoch. Returns
   * the transaction, or undefined when they were ended already.
   */
  terminateDataSet(dataSetId: bigint): Promise<Hash | undefined>
  /** The first `size` bytes of a copy's piece as its provider serves it (`GET <retrievalUrl>`). */
  retrievePiece(retrievalUrl: string, size: number, signal: AbortSignal): AsyncIterable<Uint8Array>
  /** One block of a copy's CAR from its provider's trustless gateway (`GET /ipfs/<cid>`, raw); the caller checks it. */
  retrieveBlock(retrievalUrl: string, blockCid: string, signal: AbortSignal): Promise<Uint8Array>
}

export interface FocClientOptions {
  /** The chain's FEVM JSON-RPC (Lotus's /rpc/v1). */
  rpcUrl: string
  /** Where the Onchain Cloud is found from (the FWSS proxy, Multicall3, the endorsement set): everything else is read from FWSS. */
  anchors: FocAnchors
  /** The chain ids the node may be: the network's own. */
  chainIds: readonly number[]
  account: LocalAccount
  /** Names our data sets apart from other applications' of the same wallet (the SDK's `source`). */
  source?: string
  /** Per JSON-RPC request. */
  rpcTimeoutMs?: number
  /** How often FWSS is asked whether it was migrated to other contracts (default a minute): one eth_call. */
  recheckMs?: number
  /** Told, once each, when FWSS was migrated and what it points at now. */
  logger?: Pick<Logger, 'info' | 'warn'>
  now?: () => number
}

/**
 * Connects to the Onchain Cloud the anchors name: finds and checks every
 * contract from FWSS on chain (deployment.ts), then hands each verb one
 * Synapse instance (and its viem client) on that chain, paying from
 * `options.account`. FWSS is asked again every `recheckMs` which contracts
 * it uses; after a migration the verbs go on with the new ones (checked
 * first), as they would after a restart. Every verb that asks the chain or
 * the SDK throws the network's errors (focNetworkError): a revert as the
 * contract's answer, by name. Throws FocDeploymentError when the chain is
 * not the network's or not a GA Onchain Cloud, viem's error when the node
 * does not answer.
 */
export async function connectFocClient(options: FocClientOptions): Promise<FocClient> {
  const { rpcUrl, anchors, chainIds, logger } = options
  const now = options.now ?? Date.now
  const recheckMs = options.recheckMs ?? 60_000
  const source = options.source ?? 'nextcloud-filecoin-gateway'
  const transport = http(rpcUrl, { timeout: options.rpcTimeoutMs ?? 30_000, retryCount: 2 })
  const reader = createPublicClient({ transport })
  const contextOf = (deployment: FocDeployment): FocContext => {
    const chain = focChain(deployment, rpcUrl)
    const synapse = Synapse.create({ chain, account: options.account, transport, source })
    return { synapse, client: synapse.client, chain, payer: options.account.address, source }
  }
  let deployment = await readFocDeployment(reader, anchors, chainIds)
  let context = contextOf(deployment)
  let checkedMs = now()
  let checking: Promise<void> | undefined

  /** Which contract an address is, in words, for a revert's message. */
  const nameOf = (address: Address) => {
    const found = Object.entries(deployment.contracts).find(([, a]) => isAddressEqual(a, address))
    return found && `${CONTRACT_NAMES[found[0] as keyof FocContracts]} (${address})`
  }

  /** Whether FWSS points elsewhere than the contracts in use; if so, the new ones are checked and used from now on. */
  async function followMigration(): Promise<void> {
    const read = await readFwssAddresses(reader, anchors)
    const moved = (Object.keys(read) as (keyof typeof read)[]).filter((k) => !isAddressEqual(read[k], deployment.contracts[k]))
    if (moved.length === 0) return
    const next = await readFocDeployment(reader, anchors, chainIds)
    const changes = Object.fromEntries(moved.map((k) => [k, `${deployment.contracts[k]} → ${next.contracts[k]}`]))
    logger?.info(
      { changes, fwssVersion: next.versions.fwss },
      'the warm storage service was migrated: the Onchain Cloud client uses its new contracts',
    )
    deployment = next
    context = contextOf(next)
  }
  /**
   * Contracts a migration moved to that this client cannot use (a pre-GA view): every verb's failure until a
   * later check finds them put right. A node that does not answer a check changes nothing.
   */
  let unusable: FocDeploymentError | undefined
  /** At most once per `recheckMs`, shared by the verbs that ask meanwhile. */
  async function current(): Promise<FocContext> {
    if (now() - checkedMs >= recheckMs) {
      checkedMs = now()
      checking ??= followMigration()
        .then(
          () => (unusable = undefined),
          (err: unknown) => {
            if (err instanceof FocDeploymentError) unusable = err
          },
        )
        .finally(() => (checking = undefined))
    }
    await checking
    if (unusable) throw unusable
    return context
  }
  const verb = <A extends unknown[], R>(work: (c: FocContext, ...args: A) => Promise<R>) =>
    guarded(async (...args: A) => work(await current(), ...args), rpcUrl, nameOf)
  return {
    address: options.account.address,
    get chain() {
      return context.chain
    },
    deployment: () => deployment,
    chainClock: keptClock(verb((c) => readChainClock(viemBlocks(c.client)))),
    chainHead: verb(async (c) => Number(await c.client.getBlockNumber({ cacheTime: 0 }))),
    funding: verb(funding),
    fund: verb(fund),
    clientDataSets: verb(dataSets),
    store: verb(store),
    copyProof: verb(copyProof),
    addedCopy: verb(addedCopy),
    pieceCopies: verb(pieceCopies),
    account: verb(account),
    removeCopy: verb(removeCopy),
    removalState: verb(removalState),
    terminateDataSet: verb(terminateDataSet),
    retrievePiece,
    retrieveBlock,
  }
}

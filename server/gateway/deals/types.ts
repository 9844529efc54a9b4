import type { FocClient } from '../../network/foc/client.ts'
import type { Logger } from '../../shared/logger.ts'
import type { ContentStore, GroupDealView, RemoteSource } from '../content/index.ts'
import type { GatewayDealState } from './deal-state.ts'
import type { StorageProviderPort } from './provider-port.ts'
import type { DealServiceClient } from './service-client.ts'

/** How a copy is stored: a deal-market deal (mk1.2, sealed in a sector) or a PDP copy on the Onchain Cloud. */
export type StorageRoute = 'market' | 'pdp'

/**
 * One proposal the gateway made for a group, and where it stands. A PDP copy
 * is one too: `proposing`/`proposed` while uploading and adding, `published`
 * once the piece is in the data set on chain (dealId: the data set), `active`
 * once a proof covering it has passed.
 */
export interface GroupDeal {
  id: number
  groupId: number
  route: StorageRoute
  /** A storage provider's miner address (f0…), or `pdp:<registry id>` for a PDP copy. */
  provider: string
  pieceCid: string
  state: GatewayDealState
  proposalId?: string
  dealId?: number
  startEpoch: number
  endEpoch: number
  tokenHash?: string
  reason?: string
  retrievable: boolean
  checkedMs?: number
  /** Head epoch when the proposal was made. */
  proposalEpoch?: number
  /**
   * Bytes the provider downloads: the CAR, then zeros up to the proposal's
   * unpadded piece size. Absent on deals made before it was recorded: the CAR alone.
   */
  transferSize?: number
  /** PDP copies: the data set and piece on chain, the epoch the piece was added, where it is served, the last proof's epoch. */
  dataSetId?: number
  pieceId?: number
  addedEpoch?: number
  retrievalUrl?: string
  lastProofEpoch?: number
  createdMs: number
  updatedMs: number
}

/** One deal as `npm run deals` shows it: the row, what was signed and answered, and its history. */
export interface DealAudit extends GroupDeal {
  /** The signed proposal (market.ClientDealProposal) as CBOR, exactly as sent. */
  signedProposal?: Uint8Array
  proposalCid?: string
  providerAnswer?: string
  events: { state: GatewayDealState; reason?: string; atMs: number }[]
}

/** A proposal about to be sent. */
export interface NewDeal {
  groupId: number
  provider: string
  pieceCid: string
  startEpoch: number
  endEpoch: number
  /** The CAR transfer's token (hashed); PDP uploads have none. */
  tokenHash?: string
  proposalEpoch: number
  /** Bytes the transfer route serves (CAR then zeros): the proposal's PieceSize × 127/128. Without it, the CAR's size. */
  transferSize?: number
  /** Default: the deal market. */
  route?: StorageRoute
}

/** What /file-info shows of a group's deals. */
export type DealView = GroupDealView

/**
 * The gateway's record of every proposal it ever made, one row per proposal,
 * with each state change kept as an event. Deals move only as the transition
 * table (deal-state.ts) allows: a `mark…` that cannot happen is false and
 * changes nothing.
 */
export interface DealStore {
  /** Records a proposal before it is sent (`proposing`), so a crash mid-call leaves a trace. */
  create(d: NewDeal): Promise<GroupDeal>
  /** What was sent and answered: the signed proposal's CBOR, its CID, the provider's words. */
  recordSent(id: number, sent: { signedProposal?: Uint8Array; proposalCid?: string; answer: string }): Promise<void>
  /** One deal by its row id. */
  get(id: number): Promise<GroupDeal | undefined>
  /** Every deal of the group, failed and ended ones too, oldest first. */
  ofGroup(groupId: number): Promise<GroupDeal[]>
  /** The group's deals that still count towards its copies, or may soon (proposing to active). */
  liveOfGroup(groupId: number): Promise<GroupDeal[]>
  /** Every deal in `state` (of one route, or all), oldest first. */
  inState(state: GatewayDealState, route?: StorageRoute): Promise<GroupDeal[]>
  /** proposing → proposed: the provider accepted, under this proposal id (deal UUID). */
  markAccepted(id: number, proposalId: string): Promise<boolean>
  /** → published with its chain deal id; the transfer token goes (the CAR is no longer fetched). */
  markPublished(id: number, dealId: number): Promise<boolean>
  /** published → active: the piece is in a sector. */
  markActive(id: number): Promise<boolean>
  /** → failed, with the reason; another provider will be asked. */
  markFailed(id: number, reason: string): Promise<boolean>
  /** → ended (expired, slashed), with the reason. */
  markEnded(id: number, reason: string): Promise<boolean>
  /** A PDP copy's piece in its data set on chain, and where the provider serves it. */
  recordPdpCopy(id: number, copy: { dataSetId: number; pieceId: number; addedEpoch: number; retrievalUrl: string }): Promise<void>
  /** A PDP copy's last accepted proof, and the epoch its payments are funded until. */
  recordProof(id: number, proof: { lastProofEpoch?: number; endEpoch: number }): Promise<void>
  /** The result of a retrieval check, and when it was made. */
  recordCheck(id: number, ok: boolean): Promise<void>
  /** Proposals in flight when the process died: the provider's answer is lost, so they count as failed. Returns how many. */
  failInterrupted(): Promise<number>
  /** Deals with their audit trail, oldest first (all, or one group's). */
  audit(groupId?: number): Promise<DealAudit[]>
  /** One deal by its deal UUID (the proposal id sent to the provider). */
  auditOf(dealUuid: string): Promise<DealAudit | undefined>
  /** What /file-info shows of a group: its live deals and how many are retrievable. */
  view(groupId: number): Promise<DealView>
  /** The views of several groups (all without ids) in one query, by group id. */
  views(groupIds?: number[]): Promise<Map<number, DealView>>
}

/** Whether new deals are verified (Fil+), and why not where verified ones were asked for. */
export interface DealKind {
  verified: boolean
  /** The chain's network version as last read; undefined before the first pass. */
  networkVersion?: number
  /** Set when verified deals were asked for (DEAL_VERIFIED) but the network no longer has them. */
  note?: string
}

/** The terms every new deal is proposed with. */
export interface DealTerms {
  /** Deal duration in epochs. */
  durationEpochs: number
  /** Attofil per GiB per epoch, decimal string; a deal's StoragePricePerEpoch is this × PieceSize / 2^30. */
  pricePerGiBEpoch: string
  /** Verified (Fil+) deals wanted; from network version 29 there are none, and deals go unverified. */
  verified: boolean
  /** A piece is padded with zeros to a provider's minimum piece size only up to this factor (Infinity: any). */
  maxPaddingFactor: number
  /** The deal must start this many epochs after the head (time to transfer and seal). */
  startOffsetEpochs: number
}

/** A group's deal progress as the engine last saw it. */
export interface DealProgress {
  /** Chain head of the engine's last pass (undefined before the first). */
  head?: number
  copies: number
  deals: GroupDeal[]
  /** The deal service's reason when the last search found no provider for the group. */
  noProviders?: string
  /** Set while the deal service cannot be reached. */
  serviceError?: string
  /** Set while the client address lacks the DataCap or escrow its deals need (nothing is proposed then). */
  fundsError?: string
  /** Whether new deals are verified, and why not where verified ones were asked for. */
  dealKind: DealKind
  retryAfterEpochs: number
  /** Wall-clock seconds per epoch, to say when a deal starts. */
  epochSeconds: number
  /** The PDP route's view of the group, when the gateway stores there. */
  pdp?: PdpProgress
}

/** What the deal engine works with: the stores, the deal service, the providers, and its terms and timings. */
export interface DealEngineOptions {
  deals: DealStore
  content: ContentStore
  service: DealServiceClient
  providers: StorageProviderPort
  /** The client (wallet) address proposals are made from. */
  clientAddress: string
  /** The gateway's URL as providers reach it (the CAR is served under it). */
  publicUrl: () => string
  terms: DealTerms
  /** Fixed number of copies; unset: the tenant's onboarding policy decides (3 if it cannot be read yet). */
  copies?: number
  /** Time between retrieval checks of one deal. */
  retrievalCheckMs: number
  /** Longest a call to a provider may take. */
  callTimeoutMs: number
  /** Longest a provider may take to answer a proposal (Boost's own client waits 60 s: storagemarket/lp2pimpl/net.go). */
  proposalTimeoutMs: number
  /** Chain time (30 s epochs) between deal status requests to a provider about one deal. */
  statusPollMs: number
  /** Longest fetching a whole piece back from one provider may take. */
  reloadTimeoutMs: number
  /**
   * A provider that failed a group is not asked again for that group before
   * this much chain time (converted to epochs) has passed since the proposal;
   * a failed repair reload waits as long. Chain time, so that a sped-up
   * simulated network retries at its own pace.
   */
  retryAfterMs: number
  /** Deals ending within this many epochs no longer count: new ones are made (renewal), offloaded groups are reloaded for it. */
  renewBeforeEpochs: number
  /**
   * Longest a group reloaded for repair is held with its bytes on disk while
   * its copies are not back (no provider takes it, deals keep failing): then
   * it is released to offloaded, and a new reload waits `retryAfterMs`.
   */
  repairHoldEpochs: number
  logger: Logger
  now?: () => number
  /** While this says so, ticks do nothing (the gateway lost its hold on the database and refuses writes). */
  paused?: () => boolean
  /** The PDP route (Filecoin Onchain Cloud); without it, only the deal market. */
  pdp?: PdpRouteOptions
}

/** Where one group's upload stands, for its `reason`. */
export interface PdpUpload {
  copies: number
  bytes: number
  total: number
  /** Copies whose piece is being added on chain. */
  adding: number
}

/** What the PDP route knows of a group beyond its rows, for its `reason`. */
export interface PdpProgress {
  copies: number
  upload?: PdpUpload
  /** Chain epochs until each unproved copy's first challenge window opens, by deal row id. */
  firstProofIn: Map<number, number>
  /** Why the last upload stored no copy (providers refused, stalled, none to ask). */
  refused?: string
  /** Set while nothing is uploaded: the account cannot pay. */
  fundsError?: string
}

/**
 * How long the Onchain Cloud account pays for what is stored (filecoin-pin's
 * wording): HEALTHY, WARNING with 14 days or less left, DEFICIT when the
 * funds no longer cover the lockup.
 */
export interface PdpFunding {
  status: 'HEALTHY' | 'WARNING' | 'DEFICIT'
  /** USDFC deposited in Filecoin Pay (18 decimals). */
  funds: bigint
  /** Chain epochs the funds still pay for at the current rate. */
  runwayEpochs: number
  /** When that is, in wall-clock milliseconds (a sped-up simulated network's epochs are shorter). */
  fundedUntilMs: number
}

/** What pays for the deal market's copies: the client address's DataCap and escrow, and how far its deals are paid. */
export interface MarketFunding {
  /** Bytes of DataCap left; null when the address is not a verified client. */
  dataCap: bigint | null
  /** Storage market escrow, attoFIL, and how much of it deals lock. */
  escrow: bigint
  locked: bigint
  /** When the first of the stored data's active deals ends, in wall-clock milliseconds; undefined without any. */
  dealsUntilMs?: number
}

/** The PDP route's client and policy. */
export interface PdpRouteOptions {
  client: FocClient
  /** Copies per group on PDP providers. */
  copies: number
  /**
   * Top Filecoin Pay up from the wallet's own USDFC when an upload needs it
   * (the simulated network's faucet money); otherwise an operator deposits
   * and nothing is uploaded until then.
   */
  autoDeposit: boolean
  /** Longest an upload may go without progress (bytes taken by the first provider, a copy made, a step on chain). */
  uploadIdleMs: number
  /** Groups uploaded at once. */
  maxUploads: number
}

/** What one pass of the engine did, counted. */
export interface TickReport {
  proposed: number
  published: number
  activated: number
  failed: number
  checked: number
  offloaded: number
  /** Offloaded groups short of copies whose reload for new deals started. */
  repairing: number
  /** Repaired groups that went back to offloaded. */
  repaired: number
  /** Groups held past `repairHoldEpochs` without their copies, released to offloaded to try again later. */
  repairsGivenUp: number
  serviceError?: string
}

/** The gateway's deal work: placing, following, checking, offloading and repairing groups' deals. */
export interface DealEngine {
  /** One pass over every group and deal; concurrent calls share the running pass. */
  tick(): Promise<TickReport>
  /** Where offloaded groups come back from: providers of its active deals, retrievable ones first. */
  remoteSource(): RemoteSource
  /** The copies currently required per group. */
  requiredCopies(): number
  /** What the engine knows of a group's progress, for the `reason` /file-info gives. */
  progress(groupId: number): Promise<DealProgress>
  /** Why no deals are proposed at all right now (the client lacks DataCap or escrow); undefined while they can be. */
  fundsProblem(): string | undefined
  /** How long the Onchain Cloud account pays for PDP copies, as last read; undefined without the route or before a read. */
  pdpFunding(): PdpFunding | undefined
  /** What pays for deal-market copies, as last read; undefined before a read. */
  marketFunding(): MarketFunding | undefined
  /** Whether new deals are verified (Fil+), and why not where verified ones were asked for. */
  dealKind(): DealKind
  /** Ticks every `intervalMs` until stopped. */
  start(intervalMs: number): void
  /** Stops ticking; held groups go back to offloaded, reloads under way are cut short. */
  stop(): Promise<void>
}

/**
 * What every phase of the deal engine shares: its options, the copies a group
 * needs right now, and the few rules about which deals count. One per engine.
 */
export interface EngineContext {
  o: DealEngineOptions
  now: () => number
  /** Copies required per group: DEAL_COPIES, else the tenant's policy as last read. */
  copies: number
  retryAfterEpochs: number
  /** Runs a provider call under the call timeout (or `timeoutMs`). */
  withTimeout<T>(run: (signal: AbortSignal) => Promise<T>, timeoutMs?: number): Promise<T>
  /** Marks a deal failed (another provider will be asked) and counts it. */
  fail(d: GroupDeal, reason: string, r: TickReport): Promise<void>
  /** Copies the policy wants per group on a route: `copies` on the deal market, the PDP route's own number there. */
  required(route: StorageRoute): number
  /** Whether the group's CAR is being uploaded to PDP providers right now (set by the PDP route). */
  uploading(groupId: number): boolean
  /**
   * Live copies on a route (default: the deal market) that hold (or will soon
   * hold) the group's data for a while: not about to end, and not an active
   * one whose last retrieval check failed (the provider lost or altered the
   * data). Fewer than required: repair.
   */
  counting(groupId: number, head: number, route?: StorageRoute): Promise<GroupDeal[]>
  /** Copies on a route that can be retrieved now and will last: what offload (and the end of a repair) waits for. */
  lastingRetrievable(groupId: number, head: number, route?: StorageRoute): Promise<number>
  /** Whether every route has the lasting, retrievable copies its policy wants: the group may be offloaded. */
  satisfied(groupId: number, head: number): Promise<boolean>
  /** Whether some route has fewer counting copies than its policy wants: new ones are to be made. */
  short(groupId: number, head: number, routes?: readonly StorageRoute[]): Promise<boolean>
  /** Whether a provider may still be fetching (or be sent) the group's CAR. */
  transferPending(groupId: number): Promise<boolean>
  /** One block of the group from a copy's provider, by the copy's route; the caller checks it. */
  retrieveBlock(d: GroupDeal, blockCid: string, signal: AbortSignal): Promise<Uint8Array>
  /** The group's CAR (its first `size` bytes of the piece) from a copy's provider, by the copy's route. */
  retrievePiece(d: GroupDeal, size: number, signal: AbortSignal): AsyncIterable<Uint8Array>
}

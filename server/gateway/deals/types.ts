import type { GaRates } from '../../network/foc/cost.ts'
import type { CopyFailure } from '../../shared/contracts/copy-failure.ts'
import type { Logger } from '../../shared/logger.ts'
import type { ContentStore, GroupDealView } from '../content/index.ts'
import type { GatewayDealState } from './deal-state.ts'

/** How a copy is stored: a deal-market deal (mk1.2, sealed in a sector) or a PDP copy on the Onchain Cloud. */
export type RouteName = 'market' | 'pdp'

/**
 * One copy the gateway set out to make of a group, and where it stands:
 * `proposing` (being sent) → `proposed` (a provider took it: a deal fetching
 * the CAR, or a PDP provider that holds the piece, its add about to be sent
 * or on its way) → `published` (on chain:
 * a deal id, or the piece in a data set) → `active` (sealed, or proved);
 * off that path `failed` or `ended`. Each column means one thing: a market
 * deal fills `proposalId` and `dealId`, a PDP copy `addTxHash`, `dataSetId`
 * and `pieceId`.
 */
export interface GroupDeal {
  id: number
  groupId: number
  route: RouteName
  /** A storage provider's miner address (f0…), or `pdp:<registry id>` for a PDP copy. */
  provider: string
  pieceCid: string
  state: GatewayDealState
  /** Market: the deal UUID the provider accepted. */
  proposalId?: string
  /** Market: the deal id on chain. */
  dealId?: number
  startEpoch: number
  endEpoch: number
  tokenHash?: string
  /** Why it failed or ended. */
  failure?: CopyFailure
  /** Whether its last retrieval check passed. */
  retrievable: boolean
  checkedMs?: number
  /** Retrieval checks it failed in a row while the gateway could reach other providers (absent: none). */
  failedChecks?: number
  /** When its failed checks became enough evidence that its provider no longer serves it: it counts no more (until a check passes). */
  checkFailedMs?: number
  /** Head epoch when the proposal was made. */
  proposalEpoch?: number
  /**
   * Bytes the provider downloads: the CAR, then zeros up to the proposal's
   * unpadded piece size. Absent on deals made before it was recorded: the CAR alone.
   */
  transferSize?: number
  /** PDP: the transaction that adds the piece to the data set, once sent. */
  addTxHash?: string
  /** PDP: the data set and piece on chain, the epoch the piece was added, where it is served, the last proof's epoch. */
  dataSetId?: number
  pieceId?: number
  addedEpoch?: number
  retrievalUrl?: string
  lastProofEpoch?: number
  /** PDP, committed and not proved yet: the epoch the challenge window of its first proof opens. */
  firstProofDueEpoch?: number
  /** PDP, proved and then missing its proofs: the deadline of the first period it missed, and when it stops counting. */
  missedProofEpoch?: number
  stopsCountingEpoch?: number
  createdMs: number
  updatedMs: number
}

/**
 * A proved PDP copy that missed its proofs, as the chain's proving schedule
 * says: the deadline of the first proving period it missed in a row (its
 * proof was due by that epoch), and the epoch after which, still unproved,
 * it stops counting.
 */
export interface MissedProof {
  missedProofEpoch: number
  stopsCountingEpoch: number
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
  route: RouteName
  provider: string
  pieceCid: string
  startEpoch: number
  endEpoch: number
  /** The CAR transfer's token (hashed); PDP uploads have none. */
  tokenHash?: string
  proposalEpoch: number
  /** Bytes the transfer route serves (CAR then zeros): the proposal's PieceSize × 127/128. Without it, the CAR's size. */
  transferSize?: number
}

/** What one retrieval check showed (DealStore.recordCheck). */
export type CheckResult = 'passed' | 'failed' | 'unsure'

/**
 * When failed retrieval checks, each blamed on the copy's provider, make it stop counting: `inARow` failures in a
 * row, or `failedInWindow` failures among its last `window` checks that passed or were blamed (a provider that
 * answers only some of the time never fails many in a row).
 */
export interface CheckRule {
  inARow: number
  window: number
  failedInWindow: number
}

/** A copy's checks after one more: the failures in a row and in the window, and whether that one made it stop counting. */
export interface CheckStanding {
  inARow: number
  failedInWindow: number
  /** The window's length now (at most the rule's). */
  checks: number
  stoppedNow: boolean
}

/** What /file-info shows of a group's deals. */
export type DealView = GroupDealView

/**
 * The gateway's record of every copy it ever set out to make, one row each,
 * with each state change kept as an event. Copies move only as the
 * transition table (deal-state.ts) allows: a `mark…` that cannot happen is
 * false and changes nothing.
 */
export interface DealStore {
  /** Records a copy before it is asked for (`proposing`), so a crash mid-call leaves a trace. */
  create(d: NewDeal): Promise<GroupDeal>
  /** What was sent and answered: the signed proposal's CBOR, its CID, the provider's words. */
  recordSent(id: number, sent: { signedProposal?: Uint8Array; proposalCid?: string; answer: string }): Promise<void>
  /** One deal by its row id. */
  get(id: number): Promise<GroupDeal | undefined>
  /** Every deal of the group (of one route, or all), failed and ended ones too, oldest first. */
  ofGroup(groupId: number, route?: RouteName): Promise<GroupDeal[]>
  /** The group's deals (of one route, or all) that still count towards its copies, or may soon (proposing to active). */
  liveOfGroup(groupId: number, route?: RouteName): Promise<GroupDeal[]>
  /** Every deal in `state` (of one route, or all), oldest first. */
  inState(state: GatewayDealState, route?: RouteName): Promise<GroupDeal[]>
  /** proposing → proposed: a provider took it (market: under this deal UUID; PDP: it holds the piece, an add may be sent). */
  markProposed(id: number, taken: { proposalId?: string; addTxHash?: string }): Promise<boolean>
  /** → published: on chain (market: its deal id; PDP: the data set holding the piece); the transfer token goes. */
  markPublished(id: number, onChain: { dealId?: number; dataSetId?: number }): Promise<boolean>
  /** published → active: the piece is in a sector, or proved. */
  markActive(id: number): Promise<boolean>
  /** → failed, with why; another provider will be asked. */
  markFailed(id: number, failure: CopyFailure): Promise<boolean>
  /** → ended (expired, slashed, no longer proved), with why. */
  markEnded(id: number, failure: CopyFailure): Promise<boolean>
  /** A PDP copy's add transaction, as its provider answered the add request. */
  recordAddTx(id: number, txHash: string): Promise<void>
  /** A PDP copy's piece in its data set on chain, and where the provider serves it. */
  recordPdpCopy(id: number, copy: { dataSetId: number; pieceId: number; addedEpoch: number; retrievalUrl: string }): Promise<void>
  /**
   * A PDP copy's last accepted proof, the epoch its payments are funded until, while it is not proved when its
   * first proof is due, and while a proved copy misses its proofs since when (each cleared when not given).
   */
  recordProof(
    id: number,
    proof: { lastProofEpoch?: number; endEpoch: number; firstProofDueEpoch?: number; missed?: MissedProof },
  ): Promise<void>
  /**
   * The result of a retrieval check, and when it was made: `passed`; `failed`, blamed on its provider (once
   * `rule` holds, by default at the first failure, it sets `checkFailedMs`: the copy stops counting); or `unsure`,
   * when nothing could be reached that round (not retrievable now, but no one is blamed: it counts as before, and
   * the window does not move). A pass makes a stopped copy count again once the window rule no longer holds.
   * Undefined for `unsure` and for a row that is gone.
   */
  recordCheck(id: number, result: CheckResult, rule?: CheckRule): Promise<CheckStanding | undefined>
  /**
   * Deal-market proposals in flight when the process died: the provider's answer is lost, so they count as
   * failed (PDP copies are left to their route, which looks on chain). Returns how many.
   */
  failInterrupted(): Promise<number>
  /** Deals with their audit trail, oldest first (all, or one group's). */
  audit(groupId?: number): Promise<DealAudit[]>
  /** One deal by its deal UUID (the proposal id sent to the provider). */
  auditOf(dealUuid: string): Promise<DealAudit | undefined>
  /** The PDP storage prices the warm storage service published, kept when they differ from the last ones kept. */
  recordPdpRates(rates: GaRates): Promise<void>
  /** The last PDP storage prices kept, and when they were first seen; undefined before any. */
  pdpRates(): Promise<(GaRates & { seenMs: number }) | undefined>
  /** What /file-info shows of a group: its live deals and how many are retrievable. */
  view(groupId: number): Promise<DealView>
  /** The views of several groups (all without ids) in one query, by group id. */
  views(groupIds?: number[]): Promise<Map<number, DealView>>
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
  /** Groups retired: nothing live in them for RETIRE_AFTER_SECONDS. */
  retired: number
}

/** What every route's factory is given by the gateway: the stores, the log, the clock and the shared waits. */
export interface RouteContext {
  deals: DealStore
  content: ContentStore
  logger: Logger
  now: () => number
  /**
   * A provider that failed a group is not asked again for that group before
   * this many chain epochs have passed since it failed (converted from
   * DEAL_RETRY_AFTER's chain time); a failed repair reload waits as long.
   */
  retryAfterEpochs: number
  /** Runs a provider call under the call timeout (or `timeoutMs`). */
  withTimeout<T>(run: (signal: AbortSignal) => Promise<T>, timeoutMs?: number): Promise<T>
  /** Marks a copy failed (another provider will be asked), counts it and says so in the log. */
  fail(d: GroupDeal, failure: CopyFailure, r: TickReport): Promise<void>
}

import type { GroupRecord } from '../content/index.ts'
import type { MarketStanding } from './market/types.ts'
import type { PdpFunding } from './pdp/types.ts'
import type { GroupDeal, RouteName, TickReport } from './types.ts'

/**
 * One way of keeping copies of a group: the deal market (deals sealed in
 * sectors) or Filecoin Onchain Cloud (PDP copies proved every proving
 * period). The deal engine holds a list of routes and asks each the same
 * questions; what a route needs (the deal service, the providers, the
 * Onchain Cloud client) goes to its own factory, and only the route reads
 * or writes its copies' route-specific state.
 */
export interface StorageRoute {
  /** The route's name in the deal store's `route` column. */
  readonly name: RouteName
  /** Its copies are served at once (warm), so reads ask them first. */
  readonly warm: boolean
  /** Copies of each group this route keeps, as its policy says right now. */
  required(): number
  /**
   * The head of the chain its copies are on (the deal market's Lotus chain, the Onchain Cloud's FEVM
   * chain): read once a pass, and every `head` this route is given is of that chain.
   */
  chainHead(): Promise<number>
  /** Whether a live copy still counts at `head`: false for one about to end, which is renewed instead. */
  lasting(d: GroupDeal, head: number): boolean
  /** Follows the route's copies with their providers and on chain: on, failed or ended. */
  follow(head: number, r: TickReport): Promise<void>
  /**
   * Makes copies for sendable groups short of them. False when it could not
   * try this pass (what it needs, such as the deal service, is down): the
   * engine then starts no repair for it.
   */
  place(head: number, r: TickReport, sendable: (g: GroupRecord) => boolean): Promise<boolean>
  /** Whether a provider may still be fetching (or be sent) the group's CAR: the bytes stay until it is done. */
  transferPending(groupId: number, live: readonly GroupDeal[]): boolean
  /**
   * A group is retired (nothing live left in it for RETIRE_AFTER_SECONDS): of its `live` copies, those this
   * route can stop paying for are ended (RETIRED) and taken off chain; the others run to their term, never
   * renewed. Run again after a restart, it ends only what is still live. How many of each.
   */
  retire(live: readonly GroupDeal[]): Promise<RetiredCopies>
  /** Where the group stands on this route, in its own words, for the group's reason. */
  progress(groupId: number, deals: readonly GroupDeal[]): RouteProgress
  /** What pays for this route's copies, as last read; empty before a read. */
  standing(): RouteStanding
  /** One block of the group from a copy's provider; the caller checks it against its CID. */
  retrieveBlock(d: GroupDeal, blockCid: string, signal: AbortSignal): Promise<Uint8Array>
  /** The group's CAR (the first `size` bytes of the piece) from a copy's provider. */
  retrievePiece(d: GroupDeal, size: number, signal: AbortSignal): AsyncIterable<Uint8Array>
  /** Cuts work under way short and waits for it to settle. */
  stop(): Promise<void>
}

/** A retired group's copies on one route: those ended (no longer paid for), and those that run to their term. */
export interface RetiredCopies {
  ended: number
  toTerm: number
}

/** Why a route makes no more copies of a group, with the code the group's reason takes from it. */
export type RouteBlock =
  | { code: 'WAITING_FOR_FUNDS'; words: string }
  | { code: 'DEAL_SERVICE_UNREACHABLE'; words: string }
  | { code: 'NO_PROVIDER'; words: string; /** When it is asked again, when not on every pass ("in about 4 minutes"). */ next?: string }
  | { code: 'WAITING_FOR_UPLOAD_SLOT'; words: string }
  | { code: 'CONTRACT_REFUSED'; words: string }
  | { code: 'CHAIN_UNREACHABLE'; words: string }

/** A group on one route, for its reason. */
export interface RouteProgress {
  /**
   * Whether copies are under way or kept on this route (its `steps` then make the reason). A route that is
   * `blocked` and not under way holds the group back: its block is the group's reason, whatever other routes do.
   */
  underWay: boolean
  /** Phrases of where its copies stand, in order ("1 of 3 copies stored", "uploading to 2 providers (40 % sent)"). */
  steps: string[]
  /** What stops more copies on this route, when something does. */
  blocked?: RouteBlock
  /** Said after any deal reason (which deals are made now, and why). */
  note?: string
  /**
   * A copy on this route missed its proof, still counting for a while: the group needs attention whatever else
   * its routes do (its reason says so, even once offloaded), in words.
   */
  missedProof?: string
}

/** What pays for each route's copies, by route; a route fills in its own. */
export interface RouteStanding {
  market?: MarketStanding
  /** Why the deal market makes no copies, when the gateway runs no market route (DEAL_COPIES=0, mainnet without a price ceiling). */
  marketOff?: string
  onchainCloud?: PdpFunding
  /** What the next group gets from the Onchain Cloud (PDP copies), when that route is used. */
  pdpPlan?: { copies: number; why: string }
}

import type { CidProfile } from '../../shared/cid-profile.ts'
import type { CopyFailureCode } from '../../shared/contracts/copy-failure.ts'
import type { PdpMilestone } from '../../shared/contracts/file-info.ts'
import type { GroupEvent, GroupState } from './group-state.ts'

export interface IngestResult {
  cid: string
  size: number
  /** Cumulative DAG bytes: the Tsize a parent dag-pb link would carry. */
  dagSize: number
  /** The IPIP-499 profile the DAG was built with, recorded with the file so its CID never changes with the setting. */
  cidProfile: CidProfile
}

export interface IngestOptions {
  signal?: AbortSignal
  /** The profile to import with, instead of the store's: a file written again keeps the CID it has (compaction). */
  cidProfile?: CidProfile
}

export interface Deal {
  provider: string
  state: 'proposed' | 'published' | 'active'
  dealId: number
  endEpoch: number
  isRetrievable: boolean
  /**
   * PDP copies only: the route, data set, piece and last proof, its milestone, when its first proof is due,
   * and, once proved, the deadline of the first proof it missed and when it stops counting without another.
   */
  route?: 'pdp'
  dataSetId?: number
  pieceId?: number
  lastProofEpoch?: number
  milestone?: PdpMilestone
  firstProofDueEpoch?: number
  missedProofEpoch?: number
  stopsCountingEpoch?: number
  /** PDP copies only: their epochs as unix seconds on the Onchain Cloud chain's own clock. */
  lastProofTimestamp?: number
  firstProofDueTimestamp?: number
  endTimestamp?: number
  missedProofTimestamp?: number
  stopsCountingTimestamp?: number
}

/** A deal a provider accepted and then failed; `deals` leaves it out. */
export interface FailedDeal {
  provider: string
  /** The chain deal id, when it was published before it failed. */
  dealId?: number
  /** Why, in one line: the provider's words, or our code and what we saw. */
  reason: string
  reasonCode: CopyFailureCode
  /** Whether another provider was asked in its place. */
  replaced: boolean
}

/** What the deal engine tells of a group's deals. */
export interface GroupDealView {
  deals: Deal[]
  retrievableCopies: number
  /** Absent when no provider failed the group. */
  failedDeals?: FailedDeal[]
}

export interface GroupRecord {
  id: number
  state: GroupState
  /** Bytes of the blocks stored in the group. */
  size: number
  pieceCid?: string
  /** Padded piece size in bytes. */
  pieceSize?: number
  carSize?: number
  /**
   * Only folders' directory nodes (listings) were stored in the group, no
   * file's bytes: the idle timer leaves it writable (group-closing.ts).
   */
  listingsOnly?: true
  /** Active deals whose last retrieval check succeeded. */
  retrievableCopies: number
  /** Deals shown for this group: proposed, published or active (failed ones are left out). */
  deals: Deal[]
  /** Deals providers accepted and then failed, oldest first; absent when none. */
  failedDeals?: FailedDeal[]
  createdMs: number
  updatedMs: number
  /** When the group was first seen with nothing live in it (no file, no folder's current listing); absent while live. */
  deadSinceMs?: number
  /** When it was retired, dead for RETIRE_AFTER_SECONDS: its copies are no longer paid for where they can be stopped. */
  retiredMs?: number
  /** Since when more than COMPACT_DEAD_FRACTION of its bytes are deleted files' (while live, not being compacted). */
  sparseSinceMs?: number
  /** When its compaction started: its live files are written into new groups, and it is retired once those have copies. */
  compactingMs?: number
}

export interface ContentStore {
  /**
   * Chunks and hashes the bytes as they stream in, writing blocks into the
   * current writable group. The result is only returned once every block is
   * durable (fsync). Throws if the source errors or the signal aborts; a
   * failed ingest leaves no visible trace besides orphan bytes.
   */
  ingest(source: AsyncIterable<Uint8Array>, options?: IngestOptions): Promise<IngestResult>
  /**
   * Stores a folder's directory nodes as blocks (once per folder CID), so
   * every CID the gateway reports can be fetched back from providers. A group
   * holding nothing else waits for a file's data rather than closing when idle (group-closing.ts).
   */
  storeDirectory(root: { cid: string; dagSize: number; nodes: Iterable<{ cid: string; bytes: Uint8Array }> }): Promise<void>
  /** Whether content with this root CID is fully stored here. */
  has(cid: string): Promise<boolean>
  /**
   * Whether an upload uses the group's blocks (written there, or found there already), or did within the
   * last minute: its file may not be in the tree yet, so the group must not be retired now.
   */
  inUse(groupId: number): boolean
  /**
   * Streams a file's bytes, or the inclusive byte range [start, end]. Fails with GatewayError 404 for unknown content at the first read.
   * Blocks of offloaded groups come from their providers (verified), only those the range covers; the group stays offloaded.
   * 503 CONTENT_UNAVAILABLE (at the first read) when no provider can send them.
   */
  read(cid: string, range?: { start: number; end: number }): AsyncIterable<Uint8Array>
  /** Groups holding any block of this content (for /file-info). */
  groupsOf(cid: string): Promise<GroupRecord[]>
  /** The groups of several contents at once (a folder's files), by content CID. */
  groupsOfMany(cids: string[]): Promise<Map<string, GroupRecord[]>>
  /** Only the ids of the groups holding each content: fixed once the content is stored. */
  groupIdsOfMany(cids: string[]): Promise<Map<string, number[]>>
  /** Bytes written into groups not sealed yet (each becomes a CAR file of about that size). */
  unsealedBytes(): Promise<number>
  /** These groups as they are now, with their deals. */
  groupsWithIds(ids: number[]): Promise<GroupRecord[]>
  /** Size and DAG size of stored content, or undefined. */
  stat(cid: string): Promise<{ size: number; dagSize: number } | undefined>
  /** Every group, oldest first. */
  groups(): Promise<GroupRecord[]>
  group(id: number): Promise<GroupRecord | undefined>
  /** The group's CAR file while it may be on this disk (ready_for_deals, or reload while held for deals), else undefined. */
  carFile(id: number): Promise<string | undefined>
  /** A random block CID of the group, for retrieval checks. */
  sampleBlock(id: number): Promise<string | undefined>
  /** The first root of the group's CAR: the deal's data root (Boost's DealDataRoot). */
  carRoot(id: number): Promise<string | undefined>
  /**
   * ready_for_deals → offloaded: removes the group's CAR and block file. False
   * (nothing done) while a read holds the group.
   */
  offload(id: number): Promise<boolean>
  /**
   * offloaded → reload with blocks and CAR back from a provider (verified), so
   * new deals can fetch the CAR (repair, renewal). Resolves with a release
   * that lets the group go back to offloaded. Throws GatewayError 503
   * CONTENT_UNAVAILABLE when no provider can serve it.
   */
  holdForDeals(id: number): Promise<() => Promise<void>>
  /** Where offloaded data comes from: blocks of a file being read, whole CARs for repair. */
  setRemoteSource(source: RemoteSource): void
  /** Seals the writable group now if it holds data (as if it had been idle). */
  sealWritable(): Promise<void>
  /** The piece size groups now aim for: the configured GROUP_SIZE, or less once limitGroupSize lowered it. */
  groupSize(): number
  /** Groups aim for a piece of at most `pieceSize` from now on; a writable group already past it is closed at once. */
  limitGroupSize(pieceSize: number): Promise<void>
  /** Resolves once no CAR/piece work is queued or running. */
  settled(): Promise<void>
  /** Stops timers, waits for CAR/piece work in progress, leaves everything consistent. */
  close(): Promise<void>
}

/** One provider's copy of an offloaded group. */
export interface RemoteCopy {
  provider: string
  /** The group's whole CAR: a reload for new deals (repair, renewal). */
  fetch(): AsyncIterable<Uint8Array>
  /** One block by CID, as the provider sends it (trustless `GET /ipfs/<cid>`, raw): the caller verifies it. */
  block(cid: string, signal: AbortSignal): Promise<Uint8Array>
}

/** Where an offloaded group's bytes can be fetched back from: one copy per provider, best first. */
export interface RemoteSource {
  sources(group: GroupRecord): Promise<RemoteCopy[]>
}

/** Blocks of offloaded groups for one read, each verified against its CID. */
export interface RemoteBlocks {
  /** Fails (503) unless every group has at least one copy to try: checked before a read's first byte. */
  prepare(groupIds: Iterable<number>): Promise<void>
  /** The leaf block `cid` of an offloaded group, `length` bytes, verified against its CID. */
  block(groupId: number, cid: string, length: number): Promise<Uint8Array>
}

/** Where a block's bytes sit: in its group's block file, `length` bytes from `offset`. */
export interface BlockLocation {
  groupId: number
  offset: number
  length: number
}

export interface StoredBlock extends BlockLocation {
  cid: string
}

/** One leaf of a file, where the file's bytes and the group's block file meet. */
export interface LeafRow extends BlockLocation {
  fileOffset: number
  /** The leaf's block (raw: its bytes are the file's), to fetch it from a provider when its group is offloaded. */
  cid: string
}

/** A finished ingest, as the store records it. */
export interface NewContent {
  /** A file's DAG, or a folder's directory nodes (its listing). */
  kind: 'file' | 'directory'
  cid: string
  size: number
  dagSize: number
  blocks: StoredBlock[]
  /** Raw leaves in file order. */
  leaves: { cid: string; length: number }[]
}

/** All SQL of the content store: groups, blocks, contents and their leaves. Multi-row writes run in one transaction. */
export interface Repository {
  /** Opens a new writable group and returns its id. */
  createGroup(): Promise<number>
  /** One group as stored (no deals: those are the deal engine's), or undefined. */
  group(id: number): Promise<GroupRecord | undefined>
  /** The groups in `state`, oldest first. */
  groupsInState(state: GroupState): Promise<GroupRecord[]>
  /** Every group, oldest first. */
  allGroups(): Promise<GroupRecord[]>
  /** Bytes in groups not sealed yet: the CAR files still to write. */
  unsealedBytes(): Promise<number>
  /**
   * Applies `event` to a group through the one transition table and returns
   * the new state; GroupTransitionError when it cannot happen from where the
   * group is (also when a racing transition moved it first).
   */
  transition(id: number, event: GroupEvent): Promise<GroupState>
  /** full → VRCARDone with the CAR's size and piece. */
  recordPiece(id: number, piece: { carSize: number; pieceCid: string; pieceSize: number }): Promise<void>
  /** Forgets a group (one holding only orphan bytes of failed ingests). */
  deleteGroup(id: number): Promise<void>
  /**
   * Where the block `cid` is stored, or undefined when it is not, or only in a retired group (its copies are
   * going: an upload of the same bytes stores them again) or one being compacted (its live files are being
   * written again elsewhere, so that it can be retired).
   */
  block(cid: string): Promise<BlockLocation | undefined>
  /** The group's blocks in block-file order. */
  groupBlocks(id: number): Promise<StoredBlock[]>
  /** A random block of the group (retrieval checks sample one). */
  sampleBlock(id: number): Promise<string | undefined>
  /** The group's block that comes first in its CAR. */
  firstBlock(id: number): Promise<string | undefined>
  /** How many committed blocks the group holds. */
  groupBlockCount(id: number): Promise<number>
  /** Root CIDs of the contents whose root block is in the group, in block-file order (the CAR header's roots). */
  groupRoots(id: number): Promise<string[]>
  /** Size and DAG size of stored content, or undefined. */
  content(cid: string): Promise<{ cid: string; size: number; dagSize: number } | undefined>
  /** Whether the content is stored and none of its groups is retired or being compacted. */
  storedWhole(cid: string): Promise<boolean>
  /** The file's leaves that overlap the inclusive byte range [start, end], in file order. */
  leavesInRange(cid: string, start: number, end: number): Promise<LeafRow[]>
  /** The groups holding any block of the content. */
  groupsOf(cid: string): Promise<GroupRecord[]>
  /** Which groups hold each of several contents, by content CID (ids only: a folder's summary needs no more). */
  groupIdsOfMany(cids: string[]): Promise<Map<string, number[]>>
  /** These groups, oldest first. */
  groupsWithIds(ids: number[]): Promise<GroupRecord[]>
  /** The groups of several contents in one query (a folder's files), by content CID. */
  groupsOfMany(cids: string[]): Promise<Map<string, GroupRecord[]>>
  /**
   * Records a finished ingest in one transaction: its blocks, the content
   * and its leaves, in multi-row statements (one round trip per few hundred
   * rows on PostgreSQL, not three per block).
   */
  commitContent(c: NewContent): Promise<void>
}

/** The groups of one read: which to read from this disk (held until `release`) and which from providers. */
export interface ReadHold {
  /** Offloaded groups (or ones whose reload is still under way): their blocks come from providers. */
  remote: Set<number>
  release(): Promise<void>
}

/** Which groups have their bytes on this disk: offload removes them, reads and repair bring them back. */
export interface LocalBytes {
  /** Sets where offloaded groups come back from (the providers of their deals). */
  setRemote(source: RemoteSource): void
  /** Makes every group local, reloading offloaded ones, and holds them; call the result when done. */
  acquire(groupIds: number[]): Promise<() => Promise<void>>
  /**
   * The groups of one read: local ones are held, offloaded ones (and ones
   * whose reload is still under way) stay remote, read block by block.
   */
  holdForRead(groupIds: number[]): Promise<ReadHold>
  /** Fetches blocks of offloaded groups for one read (aborted with `signal` when the reader goes). */
  remoteBlocks(signal: AbortSignal): RemoteBlocks
  /**
   * Brings an offloaded group back (`reload`) with its CAR, for new deals
   * (repair, renewal); it stays local until the returned release is called.
   */
  holdForDeals(id: number): Promise<() => Promise<void>>
  /** ready_for_deals → offloaded, then the local bytes go. False while someone reads the group. */
  offload(id: number): Promise<boolean>
  /** After a crash: an interrupted reload goes back to offloaded; files an offload left behind are swept. */
  recover(): Promise<void>
}

/** Bytes reserved for one block: in which group, and where in its block file. */
export interface Reservation {
  groupId: number
  offset: number
}

/** Groups from writable to sealed: where new blocks go, when a group closes, and its CAR and piece CID. */
export interface GroupLifecycle {
  /**
   * Reserves `length` bytes for a new block, in turn, so concurrent ingests
   * never overlap, and retains its group for the caller (who releases it):
   * the group cannot seal before the block is written.
   */
  reserve(length: number): Promise<Reservation>
  /** An ingest starts depending on pending bytes of this group. */
  retain(groupId: number): void
  /** The ingest is done with this group (committed or failed): a full group with no one writing into it is sealed. */
  release(groupId: number): void
  /** Closes the writable group now if it holds committed data. */
  sealWritable(): Promise<void>
  /** The piece size groups now aim for. */
  groupSize(): number
  /**
   * Groups aim for a piece of at most `pieceSize` from now on (the configured size
   * stays the most); a writable group already past it is closed at once.
   */
  limitGroupSize(pieceSize: number): Promise<void>
  /** Picks up where a previous process stopped: the writable group, and unfinished sealing. */
  resume(): Promise<void>
  /** Resolves when no sealing work is queued or running. */
  settled(): Promise<void>
  /** Stops timers and retries, lets the reservation in its turn finish, and waits for sealing under way. */
  close(): Promise<void>
}

import type { CidProfile } from '../../shared/cid-profile.ts'
import type { GroupState } from './group-state.ts'
import type { RemoteSource } from './remote-blocks.ts'

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
}

export interface Deal {
  provider: string
  state: 'proposed' | 'published' | 'active'
  dealId: number
  endEpoch: number
  isRetrievable: boolean
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
  /** Active deals whose last retrieval check succeeded. */
  retrievableCopies: number
  /** Deals shown for this group: proposed, published or active (failed ones are left out). */
  deals: Deal[]
  createdMs: number
  updatedMs: number
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
   * every CID the gateway reports can be fetched back from providers.
   */
  storeDirectory(root: { cid: string; dagSize: number; nodes: Iterable<{ cid: string; bytes: Uint8Array }> }): Promise<void>
  /** Whether content with this root CID is fully stored here. */
  has(cid: string): Promise<boolean>
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
  /** Resolves once no CAR/piece work is queued or running. */
  settled(): Promise<void>
  /** Stops timers, waits for CAR/piece work in progress, leaves everything consistent. */
  close(): Promise<void>
}

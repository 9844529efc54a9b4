import { epochToTimestamp, type NetworkClock } from '../shared/epochs.ts'
import type { GatewayDeal, GatewayDetails, GatewayFailedDeal, GatewayFile, GatewayGroup } from './gateway-record.ts'
import type {
  FileStateLabel,
  MetadataDeal,
  MetadataDetails,
  MetadataFailedDeal,
  MetadataFile,
  MetadataGroup,
} from '../shared/contracts/metadata-record.ts'
import { splitPath } from './user-path.ts'
import { isAttentionCode, type AttentionReasonCode, type FolderEntry, type GatewayFolderEntry } from '../shared/contracts/folder-states.ts'

export type { FileStateLabel, MetadataDeal, MetadataDetails, MetadataFile, MetadataGroup }

const FILE_STATES: Record<string, FileStateLabel> = {
  staging: 'Staging',
  offloading: 'Offloading',
  partially_offloaded: 'Partially offloaded',
  offloaded: 'Offloaded',
}

/**
 * Gateway file state → label. Accepts the older `partially offloaded`
 * spelling (and any case or separator); anything else is `Unknown`.
 */
export function fileStateLabel(state: string | null | undefined): FileStateLabel {
  if (!state) return 'Unknown'
  const key = state
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_')
  return FILE_STATES[key] ?? 'Unknown'
}

/** Gateway group state → label: only `ready_for_deals` is respelt; `VRCARDone`, `full`, etc. pass unchanged. */
export function groupStateLabel(state: string): string {
  return state === 'ready_for_deals' ? 'ready for deals' : state
}

const retrievableDeals = (g: GatewayGroup) => (g.deals ?? []).filter((d) => d.isRetrievable)

/**
 * When the storage of the whole file ends: each group lasts as long as its
 * latest retrievable deal, and the file as long as its shortest-lived group.
 * Undefined when there are no groups or a group has no retrievable deal.
 * A folder's storage is its files': a group of only its own listing
 * (`fileCount` 0) counts only when no group holds files, as for its state
 * (the gateway's folder-index.ts, stateGroupIds).
 */
export function expirationEpochOf(groups: readonly GatewayGroup[]): number | undefined {
  const holdingFiles = groups.filter((g) => g.fileCount !== 0)
  const lasting = holdingFiles.length > 0 ? holdingFiles : groups
  if (lasting.length === 0) return undefined
  let min = Infinity
  for (const group of lasting) {
    const deals = retrievableDeals(group)
    if (deals.length === 0) return undefined
    min = Math.min(min, Math.max(...deals.map((d) => d.endEpoch)))
  }
  return min
}

const toDeal = (d: GatewayDeal, clock: NetworkClock): MetadataDeal => ({
  provider: d.provider,
  state: d.state,
  dealId: d.dealId,
  endEpoch: d.endEpoch,
  isRetrievable: d.isRetrievable,
  ...(d.route ? { route: d.route } : {}),
  ...(d.dataSetId !== undefined ? { dataSetId: d.dataSetId } : {}),
  ...(d.pieceId !== undefined ? { pieceId: d.pieceId } : {}),
  ...(d.lastProofEpoch !== undefined
    ? { lastProofEpoch: d.lastProofEpoch, lastProofTimestamp: epochToTimestamp(clock, d.lastProofEpoch) }
    : {}),
  ...(d.route && d.milestone ? { milestone: d.milestone } : {}),
  ...(d.route && d.milestone === 'committed' && d.firstProofDueEpoch !== undefined
    ? { firstProofDueEpoch: d.firstProofDueEpoch, firstProofDueTimestamp: epochToTimestamp(clock, d.firstProofDueEpoch) }
    : {}),
  // A proved copy that missed its proof: both epochs or neither, as the gateway gives them.
  ...(d.route && d.missedProofEpoch !== undefined && d.stopsCountingEpoch !== undefined
    ? {
        missedProofEpoch: d.missedProofEpoch,
        missedProofTimestamp: epochToTimestamp(clock, d.missedProofEpoch),
        stopsCountingEpoch: d.stopsCountingEpoch,
        stopsCountingTimestamp: epochToTimestamp(clock, d.stopsCountingEpoch),
      }
    : {}),
})

const toFailedDeal = (d: GatewayFailedDeal): MetadataFailedDeal => ({
  provider: d.provider,
  ...(d.dealId !== undefined ? { dealId: d.dealId } : {}),
  reason: d.reason,
  ...(d.reasonCode ? { reasonCode: d.reasonCode } : {}),
  replaced: d.replaced,
})

function toGroup(g: GatewayGroup, clock: NetworkClock): MetadataGroup {
  const group: MetadataGroup = {
    ...(g.groupId !== undefined ? { groupId: g.groupId } : {}),
    state: groupStateLabel(g.state),
    retrievableCopies: g.retrievableCopies ?? retrievableDeals(g).length,
  }
  if (g.pieceCid) group.pieceCid = g.pieceCid
  if (g.deals) group.deals = g.deals.map((d) => toDeal(d, clock))
  if (g.failedDeals?.length) group.failedDeals = g.failedDeals.map(toFailedDeal)
  if (g.reason) group.reason = g.reason
  if (g.reason && g.reasonCode) group.reasonCode = g.reasonCode
  if (g.fileCount !== undefined) group.fileCount = g.fileCount
  return group
}

function toDetails(d: GatewayDetails | null | undefined, clock: NetworkClock): MetadataDetails {
  const groups = d?.groups ?? []
  const converted = groups.map((g) => toGroup(g, clock))
  const details: MetadataDetails = {
    state: fileStateLabel(d?.state),
    // The gateway's own number is passed through, as the real app does.
    retrievableCopies: d?.retrievableCopies ?? (converted.length ? Math.min(...converted.map((g) => g.retrievableCopies)) : 0),
    groups: converted,
  }
  if (d?.fileCounts) {
    const counts: NonNullable<MetadataDetails['fileCounts']> = {}
    for (const [state, count] of Object.entries(d.fileCounts)) {
      const label = fileStateLabel(state)
      counts[label] = (counts[label] ?? 0) + count
    }
    details.fileCounts = counts
  }
  // With groups we compute it ourselves; without, trust what a gateway said (under either spelling).
  const epoch = d?.groups ? expirationEpochOf(groups) : (d?.expirationEpoch ?? d?.expriationEpoch ?? undefined)
  if (epoch !== undefined) {
    details.expirationEpoch = epoch
    details.expirationTimestamp = epochToTimestamp(clock, epoch)
  } else if (!d?.groups) {
    const timestamp = d?.expirationTimestamp ?? d?.expriationTimestamp
    if (timestamp !== undefined && timestamp !== null) details.expirationTimestamp = timestamp
  }
  return details
}

/**
 * Gateway record → the app's `metadata.file`. `userPath` is the canonical
 * path the user asked for: `path`/`file` show it, never the gateway's tree.
 *
 * @example toMetadataFile(record, '/Photos/cat.jpg', networkClock('mainnet'))
 *   // { cid, path: '/Photos', file: 'cat.jpg', details: { state: 'Staging', ... } }
 */
export function toMetadataFile(record: GatewayFile, userPath: string, clock: NetworkClock): MetadataFile {
  const [path, file] = splitPath(userPath)
  return { cid: record.cid, path, file, details: toDetails(record.details, clock) }
}

/** A gateway folder entry → the Files list's entry: the state display-cased, nothing of the gateway's tree. */
export function toFolderEntry(e: GatewayFolderEntry): FolderEntry {
  return {
    name: e.name,
    ...(e.cid ? { cid: e.cid } : {}),
    state: fileStateLabel(e.state),
    retrievableCopies: e.retrievableCopies,
    ...(e.attention ? { attention: e.attention } : {}),
  }
}

/** A whole record as a list entry (a mount point, whose state the listing of its parent cannot hold). */
export function folderEntryOfRecord(name: string, record: GatewayFile): FolderEntry {
  const groups = record.details?.groups ?? []
  const waiting = groups.find((g) => g.reason && g.reasonCode && isAttentionCode(g.reasonCode))
  return {
    name,
    ...(record.cid ? { cid: record.cid } : {}),
    state: fileStateLabel(record.details?.state),
    retrievableCopies: record.details?.retrievableCopies ?? 0,
    ...(waiting ? { attention: { code: waiting.reasonCode as AttentionReasonCode, reason: waiting.reason! } } : {}),
  }
}

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
 * When a deal ends, as unix seconds: a PDP copy's as the gateway dated it on
 * the Onchain Cloud chain's own clock (its epochs are that chain's, not the
 * network's), else its end epoch on the network's clock (`clock`), as for
 * CIDgravity's gateway.
 */
const endOf = (d: GatewayDeal, clock: NetworkClock) => (d.route && d.endTimestamp) ?? epochToTimestamp(clock, d.endEpoch)

/**
 * When the storage of the whole file ends: each group lasts as long as its
 * latest retrievable deal, and the file as long as its shortest-lived group,
 * compared in time (the deal market's and the Onchain Cloud's epochs are of
 * two chains): that deal's end epoch and its time. Undefined when there are
 * no groups or a group has no retrievable deal. A folder's storage is its
 * files': a group of only its own listing (`fileCount` 0) counts only when no
 * group holds files, as for its state (the gateway's folder-index.ts,
 * stateGroupIds).
 */
export function expirationOf(groups: readonly GatewayGroup[], clock: NetworkClock): { epoch: number; timestamp: number } | undefined {
  const holdingFiles = groups.filter((g) => g.fileCount !== 0)
  const lasting = holdingFiles.length > 0 ? holdingFiles : groups
  if (lasting.length === 0) return undefined
  let first: { epoch: number; timestamp: number } | undefined
  for (const group of lasting) {
    const deals = retrievableDeals(group)
    if (deals.length === 0) return undefined
    const last = deals.map((d) => ({ epoch: d.endEpoch, timestamp: endOf(d, clock) })).reduce((a, b) => (b.timestamp > a.timestamp ? b : a))
    if (!first || last.timestamp < first.timestamp) first = last
  }
  return first
}

/** A PDP copy's epoch as unix seconds: as the gateway dated it on its chain's clock, else on the network's (older gateways). */
const pdpTime = (given: number | undefined, epoch: number, clock: NetworkClock) => given ?? epochToTimestamp(clock, epoch)

const toDeal = (d: GatewayDeal, clock: NetworkClock): MetadataDeal => ({
  provider: d.provider,
  state: d.state,
  dealId: d.dealId,
  endEpoch: d.endEpoch,
  isRetrievable: d.isRetrievable,
  ...(d.route ? { route: d.route, endTimestamp: pdpTime(d.endTimestamp, d.endEpoch, clock) } : {}),
  ...(d.dataSetId !== undefined ? { dataSetId: d.dataSetId } : {}),
  ...(d.pieceId !== undefined ? { pieceId: d.pieceId } : {}),
  ...(d.lastProofEpoch !== undefined
    ? { lastProofEpoch: d.lastProofEpoch, lastProofTimestamp: pdpTime(d.lastProofTimestamp, d.lastProofEpoch, clock) }
    : {}),
  ...(d.route && d.milestone ? { milestone: d.milestone } : {}),
  ...(d.route && d.milestone === 'committed' && d.firstProofDueEpoch !== undefined
    ? {
        firstProofDueEpoch: d.firstProofDueEpoch,
        firstProofDueTimestamp: pdpTime(d.firstProofDueTimestamp, d.firstProofDueEpoch, clock),
      }
    : {}),
  // A proved copy that missed its proof: both epochs or neither, as the gateway gives them.
  ...(d.route && d.missedProofEpoch !== undefined && d.stopsCountingEpoch !== undefined
    ? {
        missedProofEpoch: d.missedProofEpoch,
        missedProofTimestamp: pdpTime(d.missedProofTimestamp, d.missedProofEpoch, clock),
        stopsCountingEpoch: d.stopsCountingEpoch,
        stopsCountingTimestamp: pdpTime(d.stopsCountingTimestamp, d.stopsCountingEpoch, clock),
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
  const said = d?.expirationEpoch ?? d?.expriationEpoch ?? undefined
  const end = d?.groups
    ? expirationOf(groups, clock)
    : said !== undefined
      ? { epoch: said, timestamp: epochToTimestamp(clock, said) }
      : undefined
  if (end !== undefined) {
    details.expirationEpoch = end.epoch
    details.expirationTimestamp = end.timestamp
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

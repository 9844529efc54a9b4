/**
 * Shapes of what the bridge answers. The records come from the server's
 * contract modules (server/shared/contracts/), as types only: nothing of them
 * reaches the entry script, and a change there that the tab does not follow
 * fails the typecheck (test/plugin-ui/contract-types.test-d.ts).
 */
import type {
  DealState as GatewayDealState,
  GroupState as GatewayGroupState,
  PdpMilestone as GatewayPdpMilestone,
} from '../server/shared/contracts/file-info.ts'
import type {
  FileStateLabel,
  MetadataDeal,
  MetadataDetails,
  MetadataFailedDeal,
  MetadataFile,
  MetadataGroup,
} from '../server/shared/contracts/metadata-record.ts'
import type { NetworkName } from '../server/shared/contracts/network.ts'
import type { TabConfig as ServedTabConfig } from '../server/shared/contracts/tab-config.ts'

export type FileState = FileStateLabel

/** The group states our gateway reports, as the bridge spells them; other gateways may send others. */
export type GroupState = Exclude<GatewayGroupState, 'ready_for_deals'> | 'ready for deals'

export type DealState = GatewayDealState

/** A PDP copy's milestone: uploading → committed (piece confirmed on chain) → proved. */
export type PdpMilestone = GatewayPdpMilestone

export type Network = NetworkName

export type Deal = MetadataDeal

/** A deal a provider took and then failed, and whether another provider replaced it. */
export type FailedDeal = MetadataFailedDeal

export type Group = MetadataGroup

export type FileDetails = MetadataDetails

export type FileRecord = MetadataFile

/** What the tab needs to know about the link, from `GET /ocs/v2.php/apps/gateway/config`; a bridge without the route leaves only the first two. */
export type TabConfig = Pick<ServedTabConfig, 'network' | 'ipfsGateway'> & Partial<Omit<ServedTabConfig, 'network' | 'ipfsGateway'>>

/** The file or folder the sidebar shows, whichever host API handed it over. */
export interface FileTarget {
  /** Path in the user's files tree, e.g. `/Photos/cat.jpg`. */
  filePath: string
  name: string
  isFolder: boolean
}

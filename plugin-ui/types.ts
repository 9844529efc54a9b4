/**
 * Shapes of what the bridge answers, as DESIGN.md "The app surface" fixes them.
 * Kept free of Vue so services and utils can be tested on their own.
 */

export type FileState = 'Staging' | 'Offloading' | 'Partially offloaded' | 'Offloaded' | 'Unknown'

export type GroupState = 'writable' | 'full' | 'VRCARDone' | 'ready for deals' | 'offloaded' | 'reload'

export type DealState = 'proposed' | 'published' | 'active'

export type Network = 'simnet' | 'mainnet' | 'calibration'

export interface Deal {
  provider: string
  dealId: number | string
  endEpoch: number
  isRetrievable: boolean
  state: DealState
}

export interface Group {
  /** The gateway's number of the group, the same in every view; optional (not every gateway says). */
  groupId?: number
  state: GroupState
  pieceCid?: string
  retrievableCopies: number
  deals?: Deal[]
  /** The gateway's plain-words answer to "why not further yet?"; optional (not every gateway says). */
  reason?: string
  /** Folders: how many of the folder's files have data in this group; optional. */
  fileCount?: number
}

export interface FileDetails {
  state: FileState
  retrievableCopies: number
  expirationEpoch?: number
  /** Unix seconds. */
  expirationTimestamp?: number
  groups: Group[]
  /** Folders, when the gateway says: how many files below are in each state. */
  fileCounts?: Partial<Record<FileState, number>>
}

export interface FileRecord {
  cid: string
  /** Directory of the file as the user sees it. */
  path: string
  /** Its name. */
  file: string
  details?: FileDetails
}

/** What the tab needs to know about the link, from `GET /ocs/v2.php/apps/gateway/config`. */
export interface TabConfig {
  network: Network
  /** Base URL of an IPFS HTTP gateway, e.g. `https://ipfs.io`; empty for none. */
  ipfsGateway: string
  /** Unix seconds of epoch 0, to turn deal end epochs into dates; absent when unknown. */
  genesisTimestamp?: number
  /** Wall-clock seconds per epoch: 30, or less on a sped-up simulated network. */
  epochSeconds?: number
  /** A sped-up simulated network's pace in words ("1 minute ≈ 5 hours"); absent in real time. */
  speed?: string
}

/** The file or folder the sidebar shows, whichever host API handed it over. */
export interface FileTarget {
  /** Path in the user's files tree, e.g. `/Photos/cat.jpg`. */
  filePath: string
  name: string
  isFolder: boolean
}

import type { MockResponse } from './http-mock.ts'
import type { FileDetails, FileRecord } from '../../plugin-ui/types.ts'

export const FILE_CID = 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku'
export const PIECE_CID = 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq'

export function fileRecord(details: Partial<FileDetails> = {}, extra: Partial<FileRecord> = {}): FileRecord {
  return {
    cid: FILE_CID,
    path: '/Documents',
    file: 'report.pdf',
    details: { state: 'Staging', retrievableCopies: 0, groups: [{ state: 'writable', retrievableCopies: 0 }], ...details },
    ...extra,
  }
}

export function ok(record: FileRecord): MockResponse {
  return { status: 200, data: { success: true, metadata: { file: record } } }
}

export function fail(status: number, error: string): MockResponse {
  return { status, data: { success: false, error } }
}

export function tabConfig(
  network: string,
  ipfsGateway = 'https://ipfs.example.org',
  genesisTimestamp?: number,
  clock: { epochSeconds?: number; speed?: string } = {},
): MockResponse {
  return { status: 200, data: { success: true, config: { network, ipfsGateway, genesisTimestamp, ...clock } } }
}

/** What Nextcloud 29–32 hand to a tab: `path` is the parent folder. */
export const legacyFile = (path = '/Documents', name = 'report.pdf') => ({ path, name, type: 'file' })
export const legacyFolder = (path = '/', name = 'Photos') => ({ path, name, type: 'dir' })

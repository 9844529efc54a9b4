/**
 * The states of a listed folder's entries, asked of the bridge once per
 * listing (`get-folder-states`), never once per row: every row of a folder
 * shares one request, and asks again only once the answer is a few seconds old.
 */
import type { FolderEntry } from '../../server/shared/contracts/folder-states.ts'

import { getRequestToken } from '@nextcloud/auth'
import { generateOcsUrl } from '@nextcloud/router'

export type { FolderEntry }

export interface ListedFolder {
  entries: ReadonlyMap<string, FolderEntry>
  /** Where retrievable entries open on IPFS; absent where the network does not publish data. */
  ipfsGateway?: string
}

export type FetchFolder = (folderPath: string) => Promise<ListedFolder | undefined>

/** How long one answer serves every row of a listing (and a re-render of it). */
export const KEEP_MS = 5_000
/** Folders whose answers are kept; the oldest goes first. */
const MAX_FOLDERS = 50

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

/** One `get-folder-states` call; undefined for any failure: the list then shows no badges, and says nothing. */
export const fetchFolderStates: FetchFolder = async (folderPath) => {
  try {
    const res = await fetch(generateOcsUrl('apps/gateway/get-folder-states'), {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'OCS-APIRequest': 'true', 'Content-Type': 'application/json', requesttoken: getRequestToken() ?? '' },
      body: JSON.stringify({ folderPath }),
    })
    if (!res.ok) return undefined
    const body: unknown = await res.json()
    const folder = isObject(body) && body.success === true && isObject(body.folder) ? body.folder : undefined
    if (!folder || !Array.isArray(folder.entries)) return undefined
    const entries = new Map<string, FolderEntry>()
    for (const e of folder.entries as unknown[]) {
      if (isObject(e) && typeof e.name === 'string' && typeof e.state === 'string') entries.set(e.name, e as unknown as FolderEntry)
    }
    return { entries, ...(typeof folder.ipfsGateway === 'string' ? { ipfsGateway: folder.ipfsGateway } : {}) }
  } catch {
    return undefined
  }
}

export interface FolderStates {
  /** The folder's states, from the answer the listing shares. */
  load(folderPath: string): Promise<ListedFolder | undefined>
  /** What is known of the folder now, without asking; undefined before its answer came. */
  known(folderPath: string): ListedFolder | undefined
}

export function createFolderStates(fetchFolder: FetchFolder = fetchFolderStates, now: () => number = Date.now): FolderStates {
  const kept = new Map<string, { at: number; answer: Promise<ListedFolder | undefined>; folder?: ListedFolder }>()
  return {
    load(folderPath) {
      const found = kept.get(folderPath)
      if (found && now() - found.at < KEEP_MS) return found.answer
      const entry: { at: number; answer: Promise<ListedFolder | undefined>; folder?: ListedFolder } = {
        at: now(),
        answer: fetchFolder(folderPath),
      }
      entry.answer.then((folder) => {
        entry.folder = folder
      })
      // The previous answer stays known until the new one comes, so menus do not flicker.
      if (found?.folder) entry.folder = found.folder
      kept.delete(folderPath)
      kept.set(folderPath, entry)
      if (kept.size > MAX_FOLDERS) kept.delete(kept.keys().next().value!)
      return entry.answer
    },
    known: (folderPath) => kept.get(folderPath)?.folder,
  }
}

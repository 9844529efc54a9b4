/**
 * The states of a listed folder's entries, asked of the bridge for the rows
 * the list shows (`get-folder-states` with `names`), never once per row: the
 * rows rendered together share one request, and a row asks again only once
 * its answer is a few seconds old. A repeated request carries the ETag of the
 * last answer, so an unchanged folder costs a 304 and no body: what a listing
 * costs follows the rows on screen, not the folder's size.
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

/** One answer for `names` (all of them when absent), or 'unchanged' when `etag` still holds (304). */
export type FetchFolder = (
  folderPath: string,
  names: readonly string[] | undefined,
  etag: string | undefined,
) => Promise<(ListedFolder & { etag?: string }) | 'unchanged' | undefined>

/** How long one answer serves a row (and a re-render of it). */
export const KEEP_MS = 5_000
/** How long rows rendered together wait for each other, to share one request. */
export const GATHER_MS = 30
/** Names in one request, as the bridge takes them (MAX_FOLDER_STATE_NAMES). */
const MAX_NAMES = 500
/** Folders whose answers are kept; the oldest goes first. */
const MAX_FOLDERS = 50

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

/** One `get-folder-states` call; undefined for any failure: the list then keeps what it showed, and says nothing. */
export const fetchFolderStates: FetchFolder = async (folderPath, names, etag) => {
  try {
    const res = await fetch(generateOcsUrl('apps/gateway/get-folder-states'), {
      method: 'POST',
      credentials: 'same-origin',
      headers: {
        'OCS-APIRequest': 'true',
        'Content-Type': 'application/json',
        requesttoken: getRequestToken() ?? '',
        ...(etag ? { 'If-None-Match': etag } : {}),
      },
      body: JSON.stringify(names ? { folderPath, names } : { folderPath }),
    })
    if (res.status === 304 && etag) return 'unchanged'
    if (!res.ok) return undefined
    const body: unknown = await res.json()
    const folder = isObject(body) && body.success === true && isObject(body.folder) ? body.folder : undefined
    if (!folder || !Array.isArray(folder.entries)) return undefined
    const entries = new Map<string, FolderEntry>()
    for (const e of folder.entries as unknown[]) {
      if (isObject(e) && typeof e.name === 'string' && typeof e.state === 'string') entries.set(e.name, e as unknown as FolderEntry)
    }
    const tag = res.headers.get('ETag')
    return {
      entries,
      ...(typeof folder.ipfsGateway === 'string' ? { ipfsGateway: folder.ipfsGateway } : {}),
      ...(tag ? { etag: tag } : {}),
    }
  } catch {
    return undefined
  }
}

export interface FolderStates {
  /** The folder's states, once the answer for `name` (asked with the other rows rendered meanwhile) came. */
  load(folderPath: string, name: string): Promise<ListedFolder | undefined>
  /** What is known of the folder now, without asking; undefined before any answer came. */
  known(folderPath: string): ListedFolder | undefined
}

interface Kept {
  entries: Map<string, FolderEntry>
  ipfsGateway?: string
  /** When each name was last answered (absent from the answer counts: not on the gateway). */
  answeredAt: Map<string, number>
  /** The last request's names and its answer's ETag: asked again as they were, they may come back 304. */
  last?: { names: readonly string[]; etag: string }
  /** Names gathered for the next request, and the promise every row among them waits on. */
  gathering?: { names: Set<string>; done: Promise<void> }
}

export function createFolderStates(fetchFolder: FetchFolder = fetchFolderStates, now: () => number = Date.now): FolderStates {
  const kept = new Map<string, Kept>()
  const view = (k: Kept): ListedFolder => ({ entries: k.entries, ...(k.ipfsGateway ? { ipfsGateway: k.ipfsGateway } : {}) })

  async function ask(folderPath: string, k: Kept, wanted: string[]): Promise<void> {
    // The same rows again (a re-render, a poll): the last request as it was, with its ETag.
    const again = k.last && wanted.every((n) => k.last!.names.includes(n))
    const names = again ? k.last!.names : wanted
    for (let i = 0; i < names.length; i += MAX_NAMES) {
      const part = names.slice(i, i + MAX_NAMES)
      const answer = await fetchFolder(folderPath, part, again && names.length <= MAX_NAMES ? k.last!.etag : undefined)
      if (answer === undefined) continue
      const at = now()
      if (answer !== 'unchanged') {
        for (const name of part) {
          const entry = answer.entries.get(name)
          if (entry) k.entries.set(name, entry)
          else k.entries.delete(name)
        }
        if (answer.ipfsGateway) k.ipfsGateway = answer.ipfsGateway
        else delete k.ipfsGateway
        k.last = answer.etag && names.length <= MAX_NAMES ? { names: part, etag: answer.etag } : undefined
      }
      for (const name of part) k.answeredAt.set(name, at)
    }
  }

  return {
    async load(folderPath, name) {
      let k = kept.get(folderPath)
      if (!k) k = { entries: new Map(), answeredAt: new Map() }
      // Most recently used last; the oldest folder goes first.
      kept.delete(folderPath)
      kept.set(folderPath, k)
      if (kept.size > MAX_FOLDERS) kept.delete(kept.keys().next().value!)
      const at = k.answeredAt.get(name)
      if (at !== undefined && now() - at < KEEP_MS) return view(k)
      if (!k.gathering) {
        const names = new Set<string>()
        const folder = k
        const done = new Promise<void>((resolve) => setTimeout(resolve, GATHER_MS)).then(() => {
          if (folder.gathering?.names === names) delete folder.gathering
          return ask(folderPath, folder, [...names])
        })
        k.gathering = { names, done }
      }
      k.gathering.names.add(name)
      await k.gathering.done
      return view(k)
    },
    known(folderPath) {
      const k = kept.get(folderPath)
      return k && k.answeredAt.size > 0 ? view(k) : undefined
    },
  }
}

// @vitest-environment happy-dom
/**
 * The Files list's actions without a browser: one request per folder for
 * every row, what each action offers before and after its folder's answer,
 * and each Files API getting its own shape (a callback of the wrong shape in
 * a registry breaks every action of the list: nextcloud/richdocuments#5952).
 */
import type { FolderEntry, ListedFolder } from '../../plugin-ui/file-actions/folder-states.ts'

import { getFileActions, registerFileAction } from '@nextcloud/files'
import { describe, expect, it, vi } from 'vitest'
import { createListActions, type ListNode } from '../../plugin-ui/file-actions/actions.ts'
import { badgeKind } from '../../plugin-ui/file-actions/badge.ts'
import { createFolderStates, KEEP_MS } from '../../plugin-ui/file-actions/folder-states.ts'
import { toFiles4 } from '../../plugin-ui/file-actions/registries.ts'

const node = (path: string, type = 'file'): ListNode => ({
  path,
  dirname: path.slice(0, path.lastIndexOf('/')) || '/',
  basename: path.slice(path.lastIndexOf('/') + 1),
  type,
  root: '/files/alice',
})
const folder = (entries: FolderEntry[], ipfsGateway?: string): ListedFolder => ({
  entries: new Map(entries.map((e) => [e.name, e])),
  ...(ipfsGateway ? { ipfsGateway } : {}),
})
const STAGING: FolderEntry = { name: 'a.txt', cid: 'bafkreia', state: 'Staging', retrievableCopies: 0 }
const STORED: FolderEntry = { name: 'b.txt', cid: 'bafkreib', state: 'Offloaded', retrievableCopies: 2 }

function setup(answer: ListedFolder | undefined) {
  // The bridge's answer for the names asked, with an ETag; 304 ('unchanged') when asked with it.
  const fetchFolder = vi.fn(async (_folder: string, names: readonly string[] | undefined, etag: string | undefined) => {
    if (!answer) return undefined
    if (etag === '"v1"') return 'unchanged' as const
    return { ...answer, entries: new Map([...answer.entries].filter(([name]) => !names || names.includes(name))), etag: '"v1"' }
  })
  let now = 0
  const states = createFolderStates(fetchFolder, () => now)
  const deps = { states, openTab: vi.fn(async () => {}), copyText: vi.fn(async () => {}), openUrl: vi.fn() }
  const actions = Object.fromEntries(createListActions(deps).map((a) => [a.id, a]))
  return {
    fetchFolder,
    states,
    deps,
    actions,
    later: (ms: number) => {
      now += ms
    },
  }
}

describe('folder states', () => {
  it('asks once for the rows rendered together, only for them, and again with the ETag once the answer is a few seconds old', async () => {
    const { fetchFolder, states, later } = setup(folder([STAGING, STORED]))
    const rows = [node('/docs/a.txt'), node('/docs/b.txt'), node('/docs/gone.txt'), node('/other/a.txt')]
    await Promise.all(rows.map((n) => states.load(n.dirname, n.basename)))
    expect(fetchFolder.mock.calls).toEqual([
      ['/docs', ['a.txt', 'b.txt', 'gone.txt'], undefined],
      ['/other', ['a.txt'], undefined],
    ])
    expect([...states.known('/docs')!.entries.keys()]).toEqual(['a.txt', 'b.txt'])
    later(KEEP_MS - 1)
    await states.load('/docs', 'b.txt')
    expect(fetchFolder).toHaveBeenCalledTimes(2)
    // Old now: the same rows are asked as before, with the ETag; a 304 keeps what was shown.
    later(1)
    expect((await states.load('/docs', 'b.txt'))?.entries.get('b.txt')).toEqual(STORED)
    expect(fetchFolder.mock.calls[2]).toEqual(['/docs', ['a.txt', 'b.txt', 'gone.txt'], '"v1"'])
    // A row not asked before is asked on its own, without an ETag that would not be its answer's.
    await states.load('/docs', 'new.txt')
    expect(fetchFolder.mock.calls[3]).toEqual(['/docs', ['new.txt'], undefined])
  })

  it('keeps what it showed when the bridge fails, and asks again on the next render', async () => {
    const { fetchFolder, states } = setup(folder([STORED]))
    await states.load('/docs', 'b.txt')
    fetchFolder.mockResolvedValueOnce(undefined)
    await states.load('/docs', 'c.txt')
    expect(states.known('/docs')?.entries.get('b.txt')).toEqual(STORED)
    await states.load('/docs', 'c.txt')
    expect(fetchFolder).toHaveBeenCalledTimes(3)
  })
})

describe('list actions', () => {
  it('offers Copy CID and Why before the answer, and only where they apply after it', async () => {
    const { actions, states } = setup(folder([STAGING, STORED]))
    const a = node('/docs/a.txt')
    const b = node('/docs/b.txt')
    const missing = node('/docs/not-on-the-gateway.txt')
    expect(actions['gateway-copy-cid'].enabled([b])).toBe(true)
    expect(actions['gateway-why-not-stored'].enabled([b])).toBe(true)
    expect(actions['gateway-open-ipfs'].enabled([b])).toBe(false)
    await Promise.all([a, b, missing].map((n) => states.load(n.dirname, n.basename)))
    expect([a, b, missing].map((n) => actions['gateway-why-not-stored'].enabled([n]))).toEqual([true, false, false])
    expect([a, b, missing].map((n) => actions['gateway-copy-cid'].enabled([n]))).toEqual([true, true, false])
    // Never for several files at once, or outside the user's files (trash bin, versions).
    expect(actions['gateway-copy-cid'].enabled([a, b])).toBe(false)
    expect(actions['gateway-copy-cid'].enabled([{ ...a, root: '/trashbin/alice' }])).toBe(false)
  })

  it('copies the CID, opens the tab on the reason, and opens IPFS only where the network publishes data', async () => {
    const published = setup(folder([STAGING, STORED], 'https://ipfs.io/'))
    await Promise.all(['a.txt', 'b.txt'].map((name) => published.states.load('/docs', name)))
    expect(await published.actions['gateway-copy-cid'].exec(node('/docs/a.txt'))).toBe(true)
    expect(published.deps.copyText).toHaveBeenCalledWith('bafkreia')
    await published.actions['gateway-why-not-stored'].exec(node('/docs/a.txt'))
    expect(published.deps.openTab).toHaveBeenCalledWith(node('/docs/a.txt'), { reason: true })
    // A copy to retrieve: the link; none yet: no action.
    expect(published.actions['gateway-open-ipfs'].enabled([node('/docs/b.txt')])).toBe(true)
    expect(published.actions['gateway-open-ipfs'].enabled([node('/docs/a.txt')])).toBe(false)
    await published.actions['gateway-open-ipfs'].exec(node('/docs/b.txt'))
    expect(published.deps.openUrl).toHaveBeenCalledWith('https://ipfs.io/ipfs/bafkreib')

    const local = setup(folder([STORED]))
    await local.states.load('/docs', 'b.txt')
    expect(local.actions['gateway-open-ipfs'].enabled([node('/docs/b.txt')])).toBe(false)
  })

  it('badges an entry by what a person must know: stored, on its way, staging, or needs attention', async () => {
    expect(badgeKind(STORED)).toBe('stored')
    expect(badgeKind({ ...STORED, state: 'Partially offloaded' })).toBe('on-its-way')
    expect(badgeKind(STAGING)).toBe('staging')
    expect(badgeKind({ ...STAGING, state: 'Offloading', attention: { code: 'WAITING_FOR_FUNDS', reason: 'no escrow' } })).toBe('attention')
    expect(badgeKind({ ...STAGING, state: 'Unknown' })).toBeUndefined()
    const { actions } = setup(folder([STAGING]))
    const badge = await actions['gateway-state'].renderInline!(node('/docs/a.txt'))
    expect(badge?.title).toBe('Filecoin: staging, waiting to be packed and sent')
    expect(badge?.getAttribute('aria-label')).toBe(badge?.title)
    expect(await actions['gateway-state'].renderInline!(node('/docs/elsewhere.txt'))).toBeNull()
  })
})

describe('registration', () => {
  it('gives Nextcloud 33–35 context objects that @nextcloud/files 4 accepts, with no key the Files app would call as undefined', async () => {
    const { actions } = setup(folder([STAGING]))
    for (const action of Object.values(actions)) registerFileAction(toFiles4(action))
    const registered = getFileActions().filter((a) => a.id.startsWith('gateway-'))
    expect(registered.map((a) => a.id)).toEqual(['gateway-state', 'gateway-copy-cid', 'gateway-why-not-stored', 'gateway-open-ipfs'])
    const context = { nodes: [node('/docs/a.txt')], view: { id: 'files' }, folder: node('/docs', 'folder'), contents: [] } as never
    for (const action of registered) expect(Object.values(action).every((v) => v !== undefined)).toBe(true)
    expect(registered[0].enabled!(context)).toBe(true)
    expect((await registered[0].renderInline!(context))?.dataset.gatewayBadge).toBe('staging')
  })
})

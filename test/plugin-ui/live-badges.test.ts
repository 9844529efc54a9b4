// @vitest-environment happy-dom
/**
 * Issue 38: a listed folder's badges and menus follow its files without a
 * reload, from one request per folder at the tab's pace; a row drawn before
 * its folder's answer is drawn again once the answer comes.
 */
import type { FolderEntry, ListedFolder } from '../../plugin-ui/file-actions/folder-states.ts'

import { describe, expect, it, vi } from 'vitest'
import { createListActions, type ListNode } from '../../plugin-ui/file-actions/actions.ts'
import { createFolderStates } from '../../plugin-ui/file-actions/folder-states.ts'
import { createLiveBadges } from '../../plugin-ui/file-actions/live-badges.ts'

const node = (path: string): ListNode => ({
  path,
  dirname: path.slice(0, path.lastIndexOf('/')) || '/',
  basename: path.slice(path.lastIndexOf('/') + 1),
  type: 'file',
  root: '/files/alice',
})
const folder = (entries: FolderEntry[], ipfsGateway?: string): ListedFolder => ({
  entries: new Map(entries.map((e) => [e.name, e])),
  ...(ipfsGateway ? { ipfsGateway } : {}),
})
const entry = (name: string, state: FolderEntry['state'], copies = 0): FolderEntry => ({
  name,
  cid: `bafkrei${name[0]}`,
  state,
  retrievableCopies: copies,
})

/** The actions with live badges, a clock the test moves, and timers it runs. */
function setup(first: ListedFolder) {
  let answer = first
  let now = 0
  const fetchFolder = vi.fn(async () => answer)
  const states = createFolderStates(fetchFolder, () => now)
  const timers: (() => void)[] = []
  const updated: string[] = []
  const live = createLiveBadges({
    states,
    nodeUpdated: (n) => updated.push(n.path),
    intervalMs: 10_000,
    visible: () => true,
    setTimer: (run) => timers.push(run),
  })
  const actions = Object.fromEntries(
    createListActions({ states, live, openTab: vi.fn(async () => {}), copyText: vi.fn(async () => {}), openUrl: vi.fn() }).map((a) => [
      a.id,
      a,
    ]),
  )
  /** Draws a row as the Files app does: asks `enabled`, then renders the badge into the list. */
  const draw = async (n: ListNode) => {
    const offered = Object.values(actions)
      .filter((a) => a.enabled([n]))
      .map((a) => a.id)
    const badge = await actions['gateway-state'].renderInline!(n)
    if (badge) document.body.append(badge)
    return { offered, badge }
  }
  /** The tab's pace going by: the next poll runs, and its answer is read. */
  const tick = async (ms = 10_000) => {
    now += ms
    for (const run of timers.splice(0)) run()
    // Past FolderStates' gathering of the rows' names into one request (GATHER_MS).
    await new Promise((r) => setTimeout(r, 80))
  }
  return { fetchFolder, updated, draw, tick, answer: (a: ListedFolder) => void (answer = a) }
}

describe('live badges', () => {
  it('redraws a badge in place when its file moves on, from one request for the rows shown', async () => {
    document.body.replaceChildren()
    const t = setup(folder([entry('a.txt', 'Staging'), entry('b.txt', 'Staging')]))
    // The Files app draws a listing's rows together: their names go out in one request.
    await Promise.all([t.draw(node('/docs/a.txt')), t.draw(node('/docs/b.txt'))])
    expect(t.fetchFolder).toHaveBeenCalledTimes(1)
    t.updated.length = 0
    t.answer(folder([entry('a.txt', 'Offloaded', 2), entry('b.txt', 'Staging')]))
    await t.tick()
    expect(t.fetchFolder).toHaveBeenCalledTimes(2)
    expect((t.fetchFolder.mock.lastCall as unknown[]).slice(0, 2)).toEqual(['/docs', ['a.txt', 'b.txt']])
    const kinds = [...document.querySelectorAll<HTMLElement>('[data-gateway-badge]')].map((b) => b.dataset.gatewayBadge)
    expect(kinds.sort()).toEqual(['staging', 'stored'])
    // The Files app is told only about the row that changed, so that it asks its actions again.
    expect(t.updated).toEqual(['/docs/a.txt'])
  })

  it('tells the Files app about rows drawn before the answer came, whose menus were decided without it', async () => {
    document.body.replaceChildren()
    const t = setup(folder([entry('a.txt', 'Offloaded', 2)], 'https://ipfs.io'))
    const early = await t.draw(node('/docs/a.txt'))
    // Asked before the answer: the menu could not know the file is stored.
    expect(early.offered).toContain('gateway-why-not-stored')
    expect(early.offered).not.toContain('gateway-open-ipfs')
    expect(t.updated).toEqual(['/docs/a.txt'])
    // The Files app draws the row again: now the menu fits the file.
    const again = await t.draw(node('/docs/a.txt'))
    expect(again.offered).toContain('gateway-open-ipfs')
    expect(again.offered).not.toContain('gateway-why-not-stored')
    expect(t.updated).toEqual(['/docs/a.txt'])
  })

  it('stops asking once the list left the folder, or every file in it is stored', async () => {
    document.body.replaceChildren()
    const t = setup(folder([entry('a.txt', 'Staging')]))
    const { badge } = await t.draw(node('/docs/a.txt'))
    t.answer(folder([entry('a.txt', 'Offloaded', 2)]))
    await t.tick()
    expect(t.fetchFolder).toHaveBeenCalledTimes(2)
    await t.tick()
    await t.tick()
    // Stored for good: no more requests.
    expect(t.fetchFolder).toHaveBeenCalledTimes(2)
    badge?.remove()
    document.body.replaceChildren()
    const u = setup(folder([entry('a.txt', 'Staging')]))
    const drawn = await u.draw(node('/docs/a.txt'))
    drawn.badge?.remove()
    await u.tick()
    await u.tick()
    expect(u.fetchFolder).toHaveBeenCalledTimes(1)
  })
})

import type { GroupRecord, ReadHold, Repository } from './types.ts'

/** Who holds which group's local bytes, so offload never removes them under a reader. */
export interface GroupHolds {
  /** Makes every group local (reloading offloaded ones) and holds it; call the result when done. */
  acquire(groupIds: number[]): Promise<() => Promise<void>>
  /** Holds the local groups of one read; offloaded ones (and ones still reloading) are left remote. */
  holdForRead(groupIds: number[]): Promise<ReadHold>
  /** Whether anyone holds the group now. */
  isHeld(id: number): boolean
}

export interface GroupHoldsOptions {
  repo: Repository
  /** offloaded → reload, the group's bytes fetched back (reload-group.ts). */
  reload(group: GroupRecord): Promise<void>
  /** Removes the group's local files (its block file, CAR and their temp files). */
  removeFiles(id: number): Promise<void>
}

/**
 * Counts the holders of each group. One reload per group runs at a time,
 * however many acquire it; when the last holder of a reloaded group lets go,
 * it goes back to `offloaded` and its bytes are removed, and anyone who comes
 * for the group meanwhile waits for that before looking at its state.
 */
export function createGroupHolds(o: GroupHoldsOptions): GroupHolds {
  const { repo } = o
  const readers = new Map<number, number>()
  const reloads = new Map<number, Promise<void>>()
  // Bytes of a finished reload being removed; a new reader waits for that before reloading again.
  const removing = new Map<number, Promise<void>>()

  async function releaseOne(id: number): Promise<void> {
    const n = (readers.get(id) ?? 1) - 1
    if (n > 0) return void readers.set(id, n)
    readers.delete(id)
    // Set before the first await: a new reader waits for this before it looks at the group.
    const p = (async () => {
      if ((await repo.group(id))?.state !== 'reload') return
      await repo.transition(id, 'reloaded')
      await o.removeFiles(id)
    })().finally(() => removing.delete(id))
    removing.set(id, p)
    await p
  }

  /** Lets go of every group in `held`, once: the list is emptied as it goes. */
  const releaseAll = (held: number[]) => async () => {
    for (const id of held.splice(0)) await releaseOne(id)
  }

  /** Repair's way in (holdForDeals): a group still reloading for someone else is waited for, not reloaded twice. */
  async function acquire(groupIds: number[]): Promise<() => Promise<void>> {
    const held: number[] = []
    const release = releaseAll(held)
    try {
      for (const id of groupIds) {
        readers.set(id, (readers.get(id) ?? 0) + 1)
        held.push(id)
        await removing.get(id)
        const group = await repo.group(id)
        if (group?.state !== 'offloaded' && group?.state !== 'reload') continue
        let p = reloads.get(id)
        if (!p && group.state === 'offloaded') {
          p = o.reload(group).finally(() => reloads.delete(id))
          reloads.set(id, p)
        }
        await p
      }
    } catch (err) {
      await release()
      throw err
    }
    return release
  }

  /**
   * The groups of one read: local ones are held (a group reloaded for repair
   * keeps its bytes until the read is done), offloaded ones stay offloaded and
   * are read from providers block by block; so is a group whose reload is
   * still under way, rather than waiting for all of it.
   */
  async function holdForRead(groupIds: number[]): Promise<ReadHold> {
    const remoteIds = new Set<number>()
    const held: number[] = []
    const release = releaseAll(held)
    try {
      for (const id of groupIds) {
        // Counted first, as acquire does: a release racing with this check cannot remove the bytes under us.
        readers.set(id, (readers.get(id) ?? 0) + 1)
        await removing.get(id)
        const state = (await repo.group(id))?.state
        if (state === 'offloaded' || (state === 'reload' && reloads.has(id))) {
          // Not ours to hold: whoever reloads it holds it; the count only goes back down.
          const n = readers.get(id)! - 1
          if (n > 0) readers.set(id, n)
          else readers.delete(id)
          remoteIds.add(id)
        } else {
          held.push(id)
        }
      }
    } catch (err) {
      await release()
      throw err
    }
    return { remote: remoteIds, release }
  }

  return { acquire, holdForRead, isHeld: (id) => (readers.get(id) ?? 0) > 0 }
}

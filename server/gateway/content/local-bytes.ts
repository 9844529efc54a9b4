import { CarBlockIterator } from '@ipld/car/iterator'
import { open, rename, unlink } from 'node:fs/promises'
import type { Logger } from '../../shared/logger.ts'
import type { BlockFiles } from './block-files.ts'
import { carIsIntact, writeGroupCar } from './group-car.ts'
import { contentUnavailable, remoteBlocks } from './remote-blocks.ts'
import type { GroupRecord, LocalBytes, ReadHold, RemoteBlocks, RemoteSource, Repository } from './types.ts'
import { noFaults, type Faults } from '../../shared/faults.ts'
import { blockMatchesCid } from './verify-block.ts'

/**
 * Which groups have their bytes on this disk. Offload removes a group's block
 * file and CAR (after the state change, so a crash in between only leaves
 * files to sweep). A read of an offloaded group leaves it offloaded and
 * fetches only the blocks it reads (remote-blocks.ts); repair reloads the
 * whole group (`reload`): its CAR comes back from a provider, every block is
 * checked against its CID and the group's index, its CAR is rebuilt so
 * providers of new deals can fetch it, and once released the bytes go again
 * (`offloaded`).
 */
export function createLocalBytes(o: { repo: Repository; files: BlockFiles; logger: Logger; faults?: Faults }): LocalBytes {
  const { repo, files, logger } = o
  const faults = o.faults ?? noFaults
  const readers = new Map<number, number>()
  const reloads = new Map<number, Promise<void>>()
  // Bytes of a finished reload being removed; a new reader waits for that before reloading again.
  const removing = new Map<number, Promise<void>>()
  let remote: RemoteSource | undefined

  const reloadTemp = (id: number) => `${files.blockPath(id)}.reload`
  const removeFiles = async (id: number) => {
    await files.release(id)
    await Promise.all(
      [files.blockPath(id), files.carPath(id), `${files.carPath(id)}.tmp`, reloadTemp(id)].map((p) => unlink(p).catch(() => {})),
    )
  }

  /** Writes the blocks of a CAR at their recorded offsets, refusing any block that is not exactly ours. */
  async function restoreFrom(id: number, car: AsyncIterable<Uint8Array>): Promise<void> {
    const expected = new Map<string, { offset: number; length: number }>()
    for (const b of await repo.groupBlocks(id)) expected.set(b.cid, b)
    const out = await open(reloadTemp(id), 'w', 0o600)
    try {
      const seen = new Set<string>()
      for await (const { cid, bytes } of await CarBlockIterator.fromIterable(car)) {
        const key = cid.toString()
        const at = expected.get(key)
        if (!at || at.length !== bytes.length || !(await blockMatchesCid(cid, bytes)))
          throw new Error(`Block ${key} does not match the group's index`)
        let done = 0
        while (done < bytes.length) done += (await out.write(bytes, done, bytes.length - done, at.offset + done)).bytesWritten
        seen.add(key)
        // The `reload` fault point: group in `reload`, a partial temp file on disk.
        if (seen.size === 1) await faults.reached('reload', { groupId: id })
      }
      if (seen.size !== expected.size) throw new Error(`CAR holds ${seen.size} of the group's ${expected.size} blocks`)
      await out.datasync()
    } finally {
      await out.close()
    }
    await rename(reloadTemp(id), files.blockPath(id))
  }

  async function reload(group: GroupRecord): Promise<void> {
    await repo.transition(group.id, 'reload')
    const tried: string[] = []
    for (const source of (await remote?.sources(group)) ?? []) {
      try {
        await restoreFrom(group.id, source.fetch())
        logger.info({ groupId: group.id, provider: source.provider }, 'group reloaded from provider')
        return
      } catch (err) {
        tried.push(source.provider)
        logger.warn({ err, groupId: group.id, provider: source.provider }, 'reload from provider failed; trying the next')
        await unlink(reloadTemp(group.id)).catch(() => {})
      }
    }
    throw contentUnavailable(`${tried.length} provider(s) tried`)
  }

  async function releaseOne(id: number): Promise<void> {
    const n = (readers.get(id) ?? 1) - 1
    if (n > 0) return void readers.set(id, n)
    readers.delete(id)
    // Set before the first await: a new reader waits for this before it looks at the group.
    const p = (async () => {
      if ((await repo.group(id))?.state !== 'reload') return
      await repo.transition(id, 'reloaded')
      await removeFiles(id)
    })().finally(() => removing.delete(id))
    removing.set(id, p)
    await p
  }

  /** Makes every group local (reloading offloaded ones); call the result when done. Repair's way in (holdForDeals). */
  async function acquire(groupIds: number[]): Promise<() => Promise<void>> {
    const held: number[] = []
    const release = async () => {
      for (const id of held.splice(0)) await releaseOne(id)
    }
    try {
      for (const id of groupIds) {
        readers.set(id, (readers.get(id) ?? 0) + 1)
        held.push(id)
        await removing.get(id)
        const group = await repo.group(id)
        if (group?.state !== 'offloaded' && group?.state !== 'reload') continue
        let p = reloads.get(id)
        if (!p && group.state === 'offloaded') {
          p = reload(group).finally(() => reloads.delete(id))
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
    const release = async () => {
      for (const id of held.splice(0)) await releaseOne(id)
    }
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

  return {
    setRemote(source: RemoteSource) {
      remote = source
    },
    acquire,
    holdForRead,
    remoteBlocks: (signal: AbortSignal): RemoteBlocks => remoteBlocks({ source: remote, group: (id) => repo.group(id), logger, signal }),
    /**
     * Brings an offloaded group back (`reload`) with its CAR, for new deals
     * (repair, renewal); it stays local until the returned release is called.
     * The CAR is rebuilt from the verified blocks and must give the group's
     * piece CID again, so providers get exactly the piece the deals name.
     */
    async holdForDeals(id: number): Promise<() => Promise<void>> {
      const release = await acquire([id])
      try {
        const g = await repo.group(id)
        if (!g?.pieceCid) throw new Error(`Group ${id} has no piece CID`)
        if (!(await carIsIntact(files.carPath(id), g.carSize))) {
          const car = await writeGroupCar(id, repo, files, faults)
          if (car.pieceCid !== g.pieceCid || car.carSize !== g.carSize)
            throw new Error(`Rebuilt CAR of group ${id} does not match its piece CID`)
        }
      } catch (err) {
        await release()
        throw err
      }
      return release
    },
    async offload(id: number): Promise<boolean> {
      if ((readers.get(id) ?? 0) > 0) return false
      await repo.transition(id, 'offload')
      // The `offload` fault point: offloaded in the store, files still on disk.
      await faults.reached('offload', { groupId: id })
      await removeFiles(id)
      return true
    },
    async recover(): Promise<void> {
      for (const g of await repo.groupsInState('reload')) await repo.transition(g.id, 'reloaded')
      for (const g of await repo.groupsInState('offloaded')) await removeFiles(g.id)
    },
  }
}

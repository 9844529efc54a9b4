import { unlink } from 'node:fs/promises'
import type { Logger } from '../../shared/logger.ts'
import type { BlockFiles } from './block-files.ts'
import { carIsIntact, writeGroupCar } from './group-car.ts'
import { createGroupHolds } from './group-holds.ts'
import { reloadGroup, reloadTempPath } from './reload-group.ts'
import { remoteBlocks } from './remote-blocks.ts'
import type { LocalBytes, RemoteBlocks, RemoteSource, Repository } from './types.ts'
import { noFaults, type Faults } from '../../shared/faults.ts'

/**
 * Which groups have their bytes on this disk. Offload removes a group's block
 * file and CAR (after the state change, so a crash in between only leaves
 * files to sweep). A read of an offloaded group leaves it offloaded and
 * fetches only the blocks it reads (remote-blocks.ts); repair reloads the
 * whole group (`reload`, reload-group.ts): its CAR comes back from a provider,
 * every block is checked against its CID and the group's index, its CAR is
 * rebuilt so providers of new deals can fetch it, and once released the bytes
 * go again (`offloaded`). Who holds which group is counted in group-holds.ts.
 */
export function createLocalBytes(o: { repo: Repository; files: BlockFiles; logger: Logger; faults?: Faults }): LocalBytes {
  const { repo, files, logger } = o
  const faults = o.faults ?? noFaults
  let remote: RemoteSource | undefined

  const removeFiles = async (id: number) => {
    await files.release(id)
    await Promise.all(
      [files.blockPath(id), files.carPath(id), `${files.carPath(id)}.tmp`, reloadTempPath(files, id)].map((p) => unlink(p).catch(() => {})),
    )
  }
  // `remote` is read when a reload starts: setRemote comes after the content store is made.
  const holds = createGroupHolds({ repo, removeFiles, reload: (group) => reloadGroup(group, { repo, files, logger, faults, remote }) })

  return {
    setRemote(source: RemoteSource) {
      remote = source
    },
    acquire: holds.acquire,
    holdForRead: holds.holdForRead,
    remoteBlocks: (signal: AbortSignal): RemoteBlocks => remoteBlocks({ source: remote, group: (id) => repo.group(id), logger, signal }),
    /**
     * Brings an offloaded group back (`reload`) with its CAR, for new deals
     * (repair, renewal); it stays local until the returned release is called.
     * The CAR is rebuilt from the verified blocks and must give the group's
     * piece CID again, so providers get exactly the piece the deals name.
     */
    async holdForDeals(id: number): Promise<() => Promise<void>> {
      const release = await holds.acquire([id])
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
      if (holds.isHeld(id)) return false
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

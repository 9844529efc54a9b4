/**
 * A folder says whether its files are safe: once they are offloaded, a
 * rename inside it (which rewrites the directory nodes of the folder and of
 * every folder above it, into a new group that stays staging until the next
 * upload or LISTING_WAIT_SECONDS) leaves the folder, its parents and the root
 * showing stored, with the new listing's group as a detail of the record:
 * 0 files, still being sealed.
 */
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { startDealStack, type DealStack } from './harness.ts'

let stack: DealStack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

const details = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.details

async function entryOf(s: DealStack, folder: string, name: string) {
  const res = await fetch(`${s.gatewayServer.url}/folder-states`, { method: 'POST', body: JSON.stringify({ folderPath: folder }) })
  expect(res.status).toBe(200)
  return (await res.json()).result.folder.entries.find((e: { name: string }) => e.name === name)
}

describe("a folder's state after a change inside it", () => {
  it('stays stored, with its copies, while the new listing is sealed: the folder, its parents and the root', async () => {
    const s = (stack = await startDealStack({ copies: 2 }))
    for (const dir of ['/proj', '/proj/sub']) expect((await fetch(`${s.gatewayServer.url}${dir}`, { method: 'MKCOL' })).status).toBe(201)
    for (const name of ['a.bin', 'b.bin']) expect((await s.put(`/proj/sub/${name}`, randomBytes(50_000))).status).toBe(201)
    await s.seal({ folders: true })
    expect(await s.runUntil(async () => (await details(s, '/proj')).state === 'offloaded')).toBe(true)

    const renamed = await fetch(`${s.gatewayServer.url}/proj/sub/a.bin`, {
      method: 'MOVE',
      headers: { Destination: `${s.gatewayServer.url}/proj/sub/renamed.bin` },
    })
    expect(renamed.status).toBe(201)
    // The new directory nodes are stored, in a group still open for more data.
    await s.gateway.folders.settled()

    for (const path of ['/proj/sub', '/proj', '/']) {
      const d = await details(s, path)
      expect({ path, state: d.state, retrievableCopies: d.retrievableCopies }).toEqual({ path, state: 'offloaded', retrievableCopies: 2 })
      // The listing's own progress is still told: a group of 0 files, not stored yet, with its reason.
      const listing = d.groups.filter((g: { fileCount?: number }) => g.fileCount === 0)
      expect(listing.map((g: { state: string }) => g.state)).toContain('writable')
    }
    expect(await entryOf(s, '/', 'proj')).toMatchObject({ state: 'offloaded', retrievableCopies: 2 })
    expect(await entryOf(s, '/proj', 'sub')).toMatchObject({ state: 'offloaded', retrievableCopies: 2 })
    expect(await entryOf(s, '/proj/sub', 'renamed.bin')).toMatchObject({ state: 'offloaded', retrievableCopies: 2 })

    // A folder with no file below it has only its listing to show.
    expect((await fetch(`${s.gatewayServer.url}/proj/empty`, { method: 'MKCOL' })).status).toBe(201)
    await s.gateway.folders.settled()
    expect((await details(s, '/proj/empty')).state).toBe('staging')
  }, 120_000)
})

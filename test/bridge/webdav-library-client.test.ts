/**
 * The app surface driven by the `webdav` library, the JavaScript WebDAV
 * client Nextcloud's own front end and many Node tools use (beside curl,
 * rclone, cadaver and nextcloudcmd in other tests): every call a sync tool
 * makes, with names people give files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, type FileStat, type WebDAVClient } from 'webdav'
import { ALICE, postMetadata, startBridgeOnRealGateway } from './helpers.ts'

describe('the app surface through the webdav library', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  let dav: WebDAVClient
  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
    dav = createClient(`${t.url}/remote.php/dav/files/alice`, { username: ALICE.user, password: ALICE.password })
  })
  afterAll(() => t.close())

  it('makes folders, uploads, lists and reads back, names with spaces, # and accents included', async () => {
    await dav.createDirectory('/lib client/nested', { recursive: true })
    const bytes = Buffer.from('hello from the webdav library\n')
    expect(await dav.putFileContents('/lib client/nested/Résumé #1.txt', bytes)).toBe(true)
    const listed = (await dav.getDirectoryContents('/lib client/nested')) as FileStat[]
    expect(listed.map((f) => [f.basename, f.type, f.size])).toEqual([['Résumé #1.txt', 'file', bytes.length]])
    expect(Buffer.from((await dav.getFileContents('/lib client/nested/Résumé #1.txt')) as ArrayBuffer)).toEqual(bytes)
    const stat = (await dav.stat('/lib client/nested/Résumé #1.txt')) as FileStat
    expect(stat.etag).toBeTruthy()
    // The file the library uploaded is the one the sidebar reports on.
    const record = await postMetadata({ url: t.url, body: { filePath: '/lib client/nested/Résumé #1.txt' } })
    expect(record.status).toBe(200)
    expect(record.body.metadata.file.cid).toMatch(/^bafk/)
  })

  it('copies, moves and deletes, and tells what exists', async () => {
    await dav.putFileContents('/lib client/a.txt', 'a')
    await dav.copyFile('/lib client/a.txt', '/lib client/b.txt')
    await dav.moveFile('/lib client/b.txt', '/lib client/nested/c.txt')
    expect(await dav.exists('/lib client/b.txt')).toBe(false)
    expect(await dav.exists('/lib client/nested/c.txt')).toBe(true)
    await dav.deleteFile('/lib client/a.txt')
    expect(await dav.exists('/lib client/a.txt')).toBe(false)
    expect(((await dav.getDirectoryContents('/lib client/nested')) as FileStat[]).map((f) => f.basename).sort()).toEqual([
      'Résumé #1.txt',
      'c.txt',
    ])
    // A whole-tree listing (Depth: infinity) is refused, as Nextcloud refuses it.
    await expect(dav.getDirectoryContents('/lib client', { deep: true })).rejects.toMatchObject({ status: 403 })
  })

  it('locks a file for another client and unlocks it', async () => {
    const lock = await dav.lock('/lib client/nested/c.txt')
    expect(lock.token).toMatch(/^opaquelocktoken:|^urn:uuid:/)
    const other = createClient(`${t.url}/remote.php/dav/files/alice`, { username: ALICE.user, password: ALICE.password })
    await expect(other.putFileContents('/lib client/nested/c.txt', 'overwrite')).rejects.toMatchObject({ status: 423 })
    await dav.unlock('/lib client/nested/c.txt', lock.token)
    expect(await other.putFileContents('/lib client/nested/c.txt', 'overwrite')).toBe(true)
  })

  it('is refused with the wrong password, as a 401 the library reports', async () => {
    const stranger = createClient(`${t.url}/remote.php/dav/files/alice`, { username: ALICE.user, password: 'wrong' })
    await expect(stranger.getDirectoryContents('/')).rejects.toMatchObject({ status: 401 })
  })
})

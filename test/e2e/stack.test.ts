import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startStack, basicAuth, type RunningStack } from '../../scripts/lib/stack.ts'

const PASSWORD = 'e2e-password-1'
const hasRclone = spawnSync('rclone', ['version']).status === 0

/** The whole stack as `npm start` runs it, driven by a real WebDAV client. */
describe.skipIf(!hasRclone)('npm start, rclone and the OCS route end to end', () => {
  let dataDir: string
  let localDir: string
  let stack: RunningStack

  const metadata = async (filePath: string, s = stack) => {
    const res = await fetch(`${s.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
      method: 'POST',
      headers: { authorization: basicAuth('admin', PASSWORD), 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: JSON.stringify({ filePath }),
    })
    return { status: res.status, body: (await res.json()) as any }
  }

  const rclone = (...args: string[]) =>
    execFileSync('rclone', args, {
      encoding: 'utf8',
      env: {
        ...process.env,
        RCLONE_CONFIG: '/dev/null',
        RCLONE_CONFIG_NC_TYPE: 'webdav',
        RCLONE_CONFIG_NC_URL: `${stack.appUrl}/remote.php/dav/files/admin`,
        RCLONE_CONFIG_NC_VENDOR: 'nextcloud',
        RCLONE_CONFIG_NC_USER: 'admin',
        RCLONE_CONFIG_NC_PASS: execFileSync('rclone', ['obscure', PASSWORD], { encoding: 'utf8' }).trim(),
      },
    })

  const OPERATOR_API_KEY = 'operator-chosen-key-0123456789'
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'e2e-data-'))
    localDir = mkdtempSync(join(tmpdir(), 'e2e-local-'))
    writeFileSync(join(localDir, 'notes.txt'), 'hello filecoin\n')
    // 1.5 MiB: two 1 MiB chunks (CID_PROFILE unixfs-v1-2025), so a dag-pb root over raw leaves.
    writeFileSync(join(localDir, 'big.bin'), randomBytes(1536 * 1024))
    mkdirSync(join(localDir, 'été'))
    writeFileSync(join(localDir, 'été', 'Привет мир.txt'), 'unicode names survive\n')
    // Every group of /photos is sealed within seconds: its folders' listings too, should they land in a group of their own
    // (stored a second after the last change, as the files' group closes), where they would wait a day for a file's data.
    stack = await startStack({
      DATA_DIR: dataDir,
      ADMIN_PASSWORD: PASSWORD,
      API_KEY: OPERATOR_API_KEY,
      GROUP_IDLE_SECONDS: '1',
      LISTING_WAIT_SECONDS: '1',
    })
  })

  afterAll(async () => {
    if (stack?.child.exitCode === null) await stack.stop()
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(localDir, { recursive: true, force: true })
  })

  it('uploads a folder with rclone (vendor nextcloud) and lists it back', () => {
    rclone('copy', localDir, 'nc:photos')
    const listed = JSON.parse(rclone('lsjson', '-R', 'nc:photos')) as { Path: string; Size: number; IsDir: boolean }[]
    const files = Object.fromEntries(listed.filter((e) => !e.IsDir).map((e) => [e.Path, e.Size]))
    expect(files).toEqual({ 'notes.txt': 15, 'big.bin': 1536 * 1024, 'été/Привет мир.txt': 22 })
  })

  it("reads each uploaded file's storage record through the OCS route", async () => {
    for (const [filePath, dir, name] of [
      ['/photos/notes.txt', '/photos', 'notes.txt'],
      ['/photos/big.bin', '/photos', 'big.bin'],
      ['/photos/été/Привет мир.txt', '/photos/été', 'Привет мир.txt'],
    ]) {
      const { status, body } = await metadata(filePath)
      expect(status).toBe(200)
      expect(body.success).toBe(true)
      expect(body.metadata.file).toMatchObject({ path: dir, file: name })
      expect(body.metadata.file.cid).toMatch(/^baf[a-z2-7]+$/)
      expect(['Staging', 'Offloading']).toContain(body.metadata.file.details.state)
    }
    // A single-chunk file is a raw leaf; a multi-chunk one a dag-pb root.
    expect((await metadata('/photos/notes.txt')).body.metadata.file.cid).toMatch(/^bafkrei/)
    expect((await metadata('/photos/big.bin')).body.metadata.file.cid).toMatch(/^bafybei/)
  })

  it('moves groups on to CAR and piece CID once idle, and the folder aggregates', async () => {
    let record: any
    for (let i = 0; i < 100; i++) {
      record = (await metadata('/photos')).body.metadata.file
      if (record.details.state === 'Offloading') break
      await new Promise((r) => setTimeout(r, 200))
    }
    expect(record.cid).toMatch(/^bafybei/)
    expect(record.details.state).toBe('Offloading')
    expect(record.details.groups.length).toBeGreaterThan(0)
    for (const group of record.details.groups) {
      expect(group.state).toBe('ready for deals')
      expect(group.pieceCid).toMatch(/^baga6ea4seaq/)
      expect(group.retrievableCopies).toBe(0)
    }
    expect(record.details.retrievableCopies).toBe(0)
    expect(record.details.expirationEpoch).toBeUndefined()
  })

  it("opens the deal service with the operator's API_KEY and never prints it or ADMIN_PASSWORD", async () => {
    const res = await fetch(`${stack.serviceUrl}/private/v1/get-network-epoch-duration-from-days`, {
      method: 'POST',
      headers: { 'x-api-key': OPERATOR_API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ duration: 1 }),
    })
    expect(res.status).toBe(200)
    expect(stack.output()).not.toContain(OPERATOR_API_KEY)
    expect(stack.output()).not.toContain(PASSWORD)
  })

  it('stops cleanly on SIGTERM and keeps everything across a restart', async () => {
    const before = (await metadata('/photos/big.bin')).body.metadata.file
    expect(await stack.stop('SIGTERM')).toBe(0)
    stack = await startStack({ DATA_DIR: dataDir, GROUP_IDLE_SECONDS: '1', LISTING_WAIT_SECONDS: '1' })
    const after = await metadata('/photos/big.bin')
    expect(after.status).toBe(200)
    expect(after.body.metadata.file.cid).toBe(before.cid)
    // Deals move on by themselves (the deal engine runs), so compare what a restart must keep: groups and pieces.
    const kept = (groups: { state: string; pieceCid?: string }[]) => groups.map(({ state, pieceCid }) => ({ state, pieceCid }))
    expect(kept(after.body.metadata.file.details.groups)).toEqual(kept(before.details.groups))
    // The bytes come back intact through WebDAV too.
    const listed = JSON.parse(rclone('lsjson', 'nc:photos/big.bin'))
    expect(listed[0].Size).toBe(1536 * 1024)
  })
})

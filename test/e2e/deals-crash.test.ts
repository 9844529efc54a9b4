import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { FaultPoint } from '../../server/shared/faults.ts'
import { basicAuth, startStack, type RunningStack } from '../../scripts/lib/stack.ts'

const CRASH_ENTRY = 'test/helpers/crash-entry.ts'

const PASSWORD = 'deal-crash-password'
const auth = basicAuth('admin', PASSWORD)
const dataDir = mkdtempSync(join(tmpdir(), 'deals-crash-'))
const groupsDir = join(dataDir, 'gateway', 'groups')
// Sped-up simulated network, fast deal ticks, two copies: a small file is offloaded within seconds.
// Sealing on the main thread, where the car-writing fault point sits after the CAR's first block.
const env = {
  SEAL_THREADS: '0',
  DATA_DIR: dataDir,
  ADMIN_PASSWORD: PASSWORD,
  SIMNET_SPEED: '100000',
  SIMNET_SEED: 'deal-engine-tests',
  DEAL_TICK_SECONDS: '0.2',
  DEAL_COPIES: '2',
  RETRIEVAL_CHECK_SECONDS: '1',
  GROUP_IDLE_SECONDS: '1',
  LOG_LEVEL: 'info',
}
// Bounds for outcomes we poll for; generous, since a loaded machine (a full `npm test`) is slow.
const WAIT_MS = 90_000
const TEST_MS = 240_000
let stack: RunningStack | undefined

afterAll(async () => {
  await stack?.stop('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

/** Starts `npm start`'s process (through the crash entry); `stopAt` makes the gateway stop at that fault point and wait to be killed. */
async function start(stopAt?: FaultPoint) {
  stack = await startStack({ ...env, CRASH_TEST_STOP_AT: stopAt }, [], CRASH_ENTRY)
}

async function kill() {
  await stack!.stop('SIGKILL')
  stack = undefined
}

const fileUrl = (name: string) => `${stack!.appUrl}/remote.php/dav/files/admin/${name}`

async function metadata(name: string) {
  const res = await fetch(`${stack!.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
    method: 'POST',
    headers: { Authorization: auth, 'OCS-APIRequest': 'true', 'Content-Type': 'application/json' },
    body: JSON.stringify({ filePath: `/${name}` }),
  })
  return { status: res.status, body: await res.json() }
}

async function poll<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const until = Date.now() + WAIT_MS
  while (Date.now() < until) {
    const found = await probe()
    if (found !== undefined) return found
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const waitForState = (name: string, state: string) =>
  poll(`${name} in state ${state}`, async () => {
    const m = await metadata(name)
    return m.body.metadata?.file?.details?.state === state ? m.body.metadata.file : undefined
  })

/** Waits for the line saying the gateway stopped at fault point `point` (test/helpers/faults.ts stopAt). */
const waitForPause = (point: FaultPoint) =>
  poll(`the gateway to stop at ${point}`, () => (stack!.output().includes(`"faultPoint":"${point}"`) ? true : undefined))

async function read(name: string): Promise<{ status: number; bytes: Buffer }> {
  const res = await fetch(fileUrl(name), { headers: { Authorization: auth } })
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) }
}

const groupFiles = () => readdirSync(groupsDir, { withFileTypes: true }).filter((f) => f.isFile())

describe('SIGKILL of the gateway process (npm start) around deals', () => {
  const a = randomBytes(400_000)
  const b = randomBytes(300_000)

  it('uploads a file and sees it go Staging → … → Offloaded with expiration fields', { timeout: TEST_MS }, async () => {
    await start()
    expect((await fetch(fileUrl('a.bin'), { method: 'PUT', headers: { Authorization: auth }, body: a })).status).toBe(201)
    const file = await waitForState('a.bin', 'Offloaded')
    expect(file.details.retrievableCopies).toBe(2)
    expect(file.details.expirationEpoch).toBeGreaterThan(0)
    expect(file.details.expirationTimestamp).toBeGreaterThan(0)
  })

  it(
    'killed during an upload: the completed file is intact after restart and the half upload is not there',
    { timeout: TEST_MS },
    async () => {
      const before = new Set(groupFiles().map((f) => f.name))
      const slow = new ReadableStream<Uint8Array>({
        async pull(controller) {
          controller.enqueue(randomBytes(64 * 1024))
          await new Promise((r) => setTimeout(r, 20))
        },
      })
      const pending = fetch(fileUrl('half.bin'), {
        method: 'PUT',
        headers: { Authorization: auth },
        body: slow,
        duplex: 'half',
      } as RequestInit).catch(() => undefined)
      // Killed only once the gateway has really written blocks of the unfinished upload.
      await poll('blocks of the half upload on disk', () =>
        groupFiles().some((f) => f.name.endsWith('.blocks') && !before.has(f.name) && statSync(join(groupsDir, f.name)).size >= 256 * 1024)
          ? true
          : undefined,
      )
      await kill()
      await pending
      await start('reload')
      expect((await read('half.bin')).status).toBe(404)
      expect((await metadata('a.bin')).body.metadata.file.details.state).toBe('Offloaded')
    },
  )

  it(
    'a read of an offloaded file while the gateway would stop in a reload: no reload happens, the bytes come from the providers, the group stays offloaded',
    { timeout: TEST_MS },
    async () => {
      // Reads fetch only the file's blocks now; whole-group reloads are repair's (its crash recovery: repair.test.ts, local-bytes recover()).
      const back = await read('a.bin')
      expect(back.status).toBe(200)
      expect(back.bytes.equals(a)).toBe(true)
      expect(stack!.output()).not.toContain('"faultPoint":"reload"')
      expect((await metadata('a.bin')).body.metadata.file.details.groups.map((g: { state: string }) => g.state)).toEqual(['offloaded'])
      await kill()
      await start('car-writing')
    },
  )

  it(
    'killed during CAR writing, then during offload: after each restart the file moves on, reaches Offloaded and reads back intact',
    { timeout: TEST_MS },
    async () => {
      expect((await fetch(fileUrl('b.bin'), { method: 'PUT', headers: { Authorization: auth }, body: b })).status).toBe(201)
      await waitForPause('car-writing')
      // A half-written temp CAR, never under the final name.
      expect(groupFiles().some((f) => f.name.endsWith('.car.tmp'))).toBe(true)
      await kill()

      await start('offload')
      await waitForPause('offload')
      // Offloaded in SQLite, local files not yet removed.
      expect(groupFiles().some((f) => f.name.endsWith('.car'))).toBe(true)
      await kill()

      await start()
      const file = await waitForState('b.bin', 'Offloaded')
      expect(file.details.retrievableCopies).toBe(2)
      expect((await read('b.bin')).bytes.equals(b)).toBe(true)
      expect((await read('a.bin')).bytes.equals(a)).toBe(true)
      // Nothing left behind by the kills: no CAR, temp or reload file; at most the writable group's block file. The group
      // was Offloaded in SQLite before the last kill, so its CAR is removed by the restarted gateway's cleanup, just after.
      await expect
        .poll(
          () =>
            groupFiles()
              .filter((f) => !f.name.endsWith('.blocks'))
              .map((f) => f.name),
          { timeout: 30_000 },
        )
        .toEqual([])
      expect(groupFiles().length).toBeLessThanOrEqual(1)
      expect((await metadata('a.bin')).body.metadata.file.details.state).toBe('Offloaded')
    },
  )
})

import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { basicAuth, startStack, type RunningStack } from '../helpers/stack.ts'

const PASSWORD = 'deal-crash-password'
const auth = basicAuth('admin', PASSWORD)
const dataDir = mkdtempSync(join(tmpdir(), 'deals-crash-'))
// Sped-up simulated network, fast deal ticks, two copies: a small file is offloaded within seconds.
const env = {
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
let stack: RunningStack | undefined

afterAll(async () => {
  await stack?.stop('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

const fileUrl = (name: string) => `${stack!.appUrl}/remote.php/dav/files/admin/${name}`

async function metadata(name: string) {
  const res = await fetch(`${stack!.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
    method: 'POST',
    headers: { Authorization: auth, 'OCS-APIRequest': 'true', 'Content-Type': 'application/json' },
    body: JSON.stringify({ filePath: `/${name}` }),
  })
  return { status: res.status, body: await res.json() }
}

async function waitForState(name: string, state: string, timeoutMs = 40_000): Promise<any> {
  const until = Date.now() + timeoutMs
  let last: any
  while (Date.now() < until) {
    last = await metadata(name)
    if (last.body.metadata?.file?.details?.state === state) return last.body.metadata.file
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`${name} never reached ${state}: ${JSON.stringify(last)}`)
}

async function read(name: string): Promise<{ status: number; bytes: Buffer }> {
  const res = await fetch(fileUrl(name), { headers: { Authorization: auth } })
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) }
}

describe('SIGKILL of the gateway process (npm start) around deals', () => {
  const a = randomBytes(400_000)

  it('uploads a file and sees it go Staging → … → Offloaded with expiration fields', async () => {
    stack = await startStack(env)
    expect((await fetch(fileUrl('a.bin'), { method: 'PUT', headers: { Authorization: auth }, body: a })).status).toBe(201)
    const file = await waitForState('a.bin', 'Offloaded')
    expect(file.details.retrievableCopies).toBe(2)
    expect(file.details.expirationEpoch).toBeGreaterThan(0)
    expect(file.details.expirationTimestamp).toBeGreaterThan(0)
  })

  it('killed during an upload: the completed file is intact after restart and the half upload is not there', async () => {
    const slow = new ReadableStream<Uint8Array>({
      async pull(controller) {
        controller.enqueue(randomBytes(64 * 1024))
        await new Promise((r) => setTimeout(r, 20))
      },
    })
    const pending = fetch(fileUrl('half.bin'), { method: 'PUT', headers: { Authorization: auth }, body: slow, duplex: 'half' } as RequestInit).catch(() => undefined)
    await new Promise((r) => setTimeout(r, 400))
    await stack!.stop('SIGKILL')
    await pending
    stack = await startStack(env)
    expect((await read('half.bin')).status).toBe(404)
    const back = await read('a.bin')
    expect(back.status).toBe(200)
    expect(back.bytes.equals(a)).toBe(true)
    expect((await metadata('a.bin')).body.metadata.file.details.state).toBe('Offloaded')
  })

  it('killed during a reload: after restart the group is offloaded again (not stuck in reload) and reads are intact', async () => {
    const pending = fetch(fileUrl('a.bin'), { headers: { Authorization: auth } }).catch(() => undefined)
    await new Promise((r) => setTimeout(r, 30))
    await stack!.stop('SIGKILL')
    await pending
    stack = await startStack(env)
    const file = (await metadata('a.bin')).body.metadata.file
    expect(file.details.groups.map((g: { state: string }) => g.state)).toEqual(['offloaded'])
    const back = await read('a.bin')
    expect(back.bytes.equals(a)).toBe(true)
  })

  it('killed during offload work of a second file: after restart it still reaches Offloaded and reads back intact', async () => {
    const b = randomBytes(300_000)
    expect((await fetch(fileUrl('b.bin'), { method: 'PUT', headers: { Authorization: auth }, body: b })).status).toBe(201)
    await waitForState('b.bin', 'Offloading', 20_000).catch(() => undefined)
    await stack!.stop('SIGKILL')
    stack = await startStack(env)
    await waitForState('b.bin', 'Offloaded')
    expect((await read('b.bin')).bytes.equals(b)).toBe(true)
    expect((await read('a.bin')).bytes.equals(a)).toBe(true)
  })
})

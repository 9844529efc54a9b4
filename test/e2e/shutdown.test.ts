import { afterAll, describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { request } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startStack, basicAuth } from '../../scripts/lib/stack.ts'

const PASSWORD = 'shutdown-password-1'

describe('graceful shutdown', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'shutdown-'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('finishes an upload that is in flight when SIGTERM arrives, then exits 0', async () => {
    const stack = await startStack({ DATA_DIR: dataDir, ADMIN_PASSWORD: PASSWORD })
    const body = randomBytes(2 * 1024 * 1024)
    const path = '/remote.php/dav/files/admin/in-flight.bin'
    let exited: Promise<number | null> | undefined
    const answered = new Promise<number>((resolve, reject) => {
      const req = request(stack.appUrl + path, {
        method: 'PUT',
        headers: { authorization: basicAuth('admin', PASSWORD), 'content-length': body.length },
      }, (res) => {
        res.resume()
        resolve(res.statusCode!)
      })
      req.on('error', reject)
      // First half now, the rest only after the stack was told to stop.
      req.write(body.subarray(0, body.length / 2), () => {
        exited = stack.stop('SIGTERM')
        setTimeout(() => req.end(body.subarray(body.length / 2)), 300)
      })
    })
    expect(await answered).toBe(201)
    expect(await exited).toBe(0)

    // The upload is there, whole, after a restart.
    const again = await startStack({ DATA_DIR: dataDir })
    try {
      const res = await fetch(again.appUrl + path, { headers: { authorization: basicAuth('admin', PASSWORD) } })
      expect(res.status).toBe(200)
      expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true)
    } finally {
      expect(await again.stop()).toBe(0)
    }
  })
})

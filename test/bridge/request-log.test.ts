import { describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { Writable } from 'node:stream'
import { startBridge, startFakeGateway, RECORDED_FILE_INFO, postMetadata, ALICE, basic } from './helpers.ts'

describe('request logging', () => {
  it('logs each request with method, URL, status and user, but never credentials', async () => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(chunk.toString())
        done()
      },
    })
    const gateway = await startFakeGateway((app) => app.post('/file-info', (_req, res) => res.json(RECORDED_FILE_INFO)))
    const t = await startBridge(gateway.url, {}, { logger: pino({ level: 'debug' }, sink) })
    try {
      expect((await postMetadata({ url: t.url })).status).toBe(200)
      expect((await postMetadata({ url: t.url, auth: basic('alice', 'a-wrong-secret') })).status).toBe(401)
    } finally {
      await t.close()
      await gateway.close()
    }
    const log = lines.join('')
    const entries = lines.map((l) => JSON.parse(l)).filter((e) => e.req)
    expect(entries.some((e) => e.req.method === 'POST' && e.res.statusCode === 200 && e.user === 'alice')).toBe(true)
    expect(entries.some((e) => e.res.statusCode === 401)).toBe(true)
    for (const secret of [ALICE.password, 'a-wrong-secret', Buffer.from(`alice:${ALICE.password}`).toString('base64')]) {
      expect(log).not.toContain(secret)
    }
    expect(log.toLowerCase()).not.toContain('authorization')
  })
})

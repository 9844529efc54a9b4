import { describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { Writable } from 'node:stream'
import { startTestService } from './helpers.ts'

describe('deal service request log', () => {
  it('logs each request once with the UUID that error envelopes give as code, and never the API key', async () => {
    const lines: string[] = []
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(chunk.toString()), done()) })
    const t = await startTestService({ deps: { logger: pino({ level: 'info' }, sink) } })
    try {
      const failed = await t.post('/private/v1/get-network-epoch-duration-from-days', { duration: 'ten' })
      expect(failed.status).toBe(400)
      const code = (failed.json as { error: { code: string } }).error.code
      expect(code).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      const ok = await t.post('/private/v1/get-network-epoch-duration-from-days', { duration: 10 })
      expect(ok.status).toBe(200)

      const entries = lines.map((l) => JSON.parse(l)).filter((e) => e.req)
      expect(entries.filter((e) => e.reqId === code)).toHaveLength(1)
      expect(entries.find((e) => e.reqId === code).res.statusCode).toBe(400)
      expect(new Set(entries.map((e) => e.reqId)).size).toBe(entries.length)
      expect(lines.join('')).not.toContain(t.service.createdApiKey!)
    } finally {
      await t.close()
    }
  })
})

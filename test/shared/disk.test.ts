import { Writable } from 'node:stream'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { createBackoff, isDiskFull, watchDiskSpace } from '../../server/shared/disk.ts'

describe('isDiskFull', () => {
  it('knows a full disk by its codes, also when wrapped', () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' })
    expect(isDiskFull(enospc)).toBe(true)
    expect(isDiskFull(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))).toBe(true)
    expect(isDiskFull(Object.assign(new Error('Disk quota exceeded'), { code: 'EDQUOT' }))).toBe(true)
    expect(isDiskFull(new Error('pipeline failed', { cause: enospc }))).toBe(true)
    expect(isDiskFull(Object.assign(new Error('EACCES'), { code: 'EACCES' }))).toBe(false)
    expect(isDiskFull(undefined)).toBe(false)
  })
})

describe('watchDiskSpace', () => {
  it('warns once when free space drops below the threshold and once when it is back', async () => {
    const lines: { level: number; msg: string }[] = []
    const logger = pino({ level: 'info' }, new Writable({ write: (c, _e, done) => (lines.push(JSON.parse(String(c))), done()) }))
    let free = 5 * 2 ** 30
    const watch = watchDiskSpace({ dir: '/data', warnBelowBytes: 2 ** 30, logger, freeBytes: async () => free, intervalMs: 3_600_000 })
    await watch.check()
    free = 500 * 2 ** 20
    await watch.check()
    await watch.check()
    free = 2 * 2 ** 30
    await watch.check()
    watch.stop()
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
      'disk space is low: uploads will be refused with 507 once it is full',
    ])
    expect(lines.filter((l) => l.msg.startsWith('disk space is back')).length).toBe(1)
  })
})

describe('createBackoff', () => {
  it('doubles the wait per failure up to its bound and starts over after a success', () => {
    const b = createBackoff(100, 1000)
    expect([b.fail(), b.fail(), b.fail(), b.fail(), b.fail()]).toEqual([100, 200, 400, 800, 1000])
    b.reset()
    expect(b.fail()).toBe(100)
  })
})

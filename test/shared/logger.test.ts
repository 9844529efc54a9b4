import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { describe, expect, it } from 'vitest'
import { createLinePrettifier, logFormatFor } from '../../server/shared/logger.ts'

describe('log format', () => {
  it('is readable lines on a terminal and JSON elsewhere, unless LOG_FORMAT says', () => {
    expect(logFormatFor(undefined, true)).toBe('pretty')
    expect(logFormatFor(undefined, false)).toBe('json')
    expect(logFormatFor('json', true)).toBe('json')
    expect(logFormatFor('pretty', false)).toBe('pretty')
  })

  it("turns a part's JSON line into one readable line naming the part, and leaves other text alone", () => {
    const pretty = createLinePrettifier()
    const line = pretty(
      JSON.stringify({ level: 40, time: Date.UTC(2026, 10, 23, 9, 5, 7), pid: 7, part: 'gateway', msg: 'disk almost full', freeMiB: 12 }),
    )
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\] WARN: gateway: disk almost full \{"freeMiB":12\}\n$/)
    expect(pretty('Created user "admin"')).toBe('Created user "admin"\n')
    expect(pretty('{not json')).toBe('{not json\n')
  })
})

describe('logging to a reader that has gone', () => {
  it('lets the process exit at once, as a supervised part must when its supervisor was killed', async () => {
    // Several lines in one go and then exit: what a part does as it stops, with its supervisor's pipe closed.
    const script = `
      import { createLogger } from ${JSON.stringify(new URL('../../server/shared/logger.ts', import.meta.url).pathname)}
      const logger = createLogger('info', 'json')
      process.once('message', () => {
        for (const step of ['shutting down', 'closed', 'stopped']) logger.info(step)
        process.exit(0)
      })
      process.send('ready')`
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    })
    const exited = once(child, 'exit')
    await once(child, 'message')
    child.stdout!.destroy()
    child.send('go')
    const hung = setTimeout(() => child.kill('SIGKILL'), 5_000)
    const [code, signal] = await exited
    clearTimeout(hung)
    expect({ code, signal }).toEqual({ code: 0, signal: null })
  }, 30_000)
})

import { describe, expect, it } from 'vitest'
import { createLinePrettifier, logFormatFor } from '../../server/shared/logger.ts'

describe('log format', () => {
  it('is readable lines on a terminal and JSON elsewhere, unless LOG_FORMAT says', () => {
    expect(logFormatFor(undefined, true)).toBe('pretty')
    expect(logFormatFor(undefined, false)).toBe('json')
    expect(logFormatFor('json', true)).toBe('json')
    expect(logFormatFor('pretty', false)).toBe('pretty')
  })

  it('turns a part\'s JSON line into one readable line naming the part, and leaves other text alone', () => {
    const pretty = createLinePrettifier()
    const line = pretty(JSON.stringify({ level: 40, time: Date.UTC(2026, 10, 23, 9, 5, 7), pid: 7, part: 'gateway', msg: 'disk almost full', freeMiB: 12 }))
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\] WARN: gateway: disk almost full \{"freeMiB":12\}\n$/)
    expect(pretty('Created user "admin"')).toBe('Created user "admin"\n')
    expect(pretty('{not json')).toBe('{not json\n')
  })
})

/** A flood of lines of one kind becomes its first few and a count (issue 39 item 8: 29 MB of warnings a minute). */
import { describe, expect, it } from 'vitest'
import { createLineLimit } from '../../server/shared/line-limit.ts'

describe('createLineLimit', () => {
  it('writes the first lines of a kind in a window, leaves the rest out, and the next window says how many', () => {
    let now = 0
    const limit = createLineLimit({ perWindow: 3, windowMs: 60_000, now: () => now })
    const written: { kind: string; leftOut: number }[] = []
    for (let i = 0; i < 1000; i++) limit('cut', (leftOut) => written.push({ kind: 'cut', leftOut }))
    // Another kind has a budget of its own.
    limit('malformed', (leftOut) => written.push({ kind: 'malformed', leftOut }))
    expect(written).toHaveLength(4)
    now = 60_000
    limit('cut', (leftOut) => written.push({ kind: 'cut', leftOut }))
    expect(written.at(-1)).toEqual({ kind: 'cut', leftOut: 997 })
    limit('cut', (leftOut) => written.push({ kind: 'cut', leftOut }))
    expect(written.at(-1)).toEqual({ kind: 'cut', leftOut: 0 })
  })
})

/**
 * The runtime the README promises: npm scripts run on Node 24 from the
 * `node` package even where the machine's own Node is older, and every
 * process they start (`node` on the PATH, the workers) runs on it too.
 */
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'

const major = (version: string) => Number(/^v?(\d+)\./.exec(version)?.[1])

describe('runtime', () => {
  it('runs the tests on Node 24 or later, and so does `node` on the PATH the scripts see', () => {
    expect(major(process.version)).toBeGreaterThanOrEqual(24)
    expect(major(execFileSync('node', ['--version'], { encoding: 'utf8' }))).toBeGreaterThanOrEqual(24)
  })

  it('has SQLite built in (node:sqlite), so nothing is compiled at install', async () => {
    const { DatabaseSync } = await import('node:sqlite')
    const db = new DatabaseSync(':memory:')
    expect(db.prepare("SELECT sqlite_version() AS v, json_valid('[1]') AS j").get()).toMatchObject({ j: 1 })
    db.close()
  })
})

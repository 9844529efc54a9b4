import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** Seconds each slow test file took on a full run (`npm run test:durations` writes it from a run's JSON report). */
const DURATIONS_FILE = join(import.meta.dirname, 'durations.json')

function recorded(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>
  } catch {
    return {}
  }
}

/**
 * Longest files first, so that with two workers the slowest end-to-end runs
 * start at once rather than last and alone: from vitest's own cache when it
 * has one, else (a fresh clone, CI) from the durations recorded in
 * test/durations.json, files it does not name after those it does.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cached = files.some((f) => this.ctx.cache.getTestSpecificationResult(f) !== undefined)
    if (cached) return super.sort(files)
    const seconds = recorded()
    const of = (f: TestSpecification) => seconds[relative(this.ctx.config.root, f.moduleId)] ?? 0
    const bySize = await super.sort(files)
    return [...bySize].sort((a, b) => of(b) - of(a))
  }
}

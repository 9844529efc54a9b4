import type { Logger } from '../../shared/logger.ts'

/** A condition worth one log line when it starts, changes kind or ends, not one per pass. */
export interface Note<T> {
  /** As last set. */
  readonly current: T | undefined
  set(value: T | undefined): void
}

/**
 * Keeps a condition (a funds problem, an unreachable service) and says it in
 * the log when its `key` changes: `said` when it starts or turns into
 * another, `cleared` when it ends. Words that change within one kind (an
 * amount owed) update the note without a new line.
 */
export function createNote<T>(o: { key: (value: T) => string; said: (value: T) => void; cleared?: (previous: T) => void }): Note<T> {
  let current: T | undefined
  return {
    get current() {
      return current
    },
    set(value) {
      const changed = (value === undefined ? undefined : o.key(value)) !== (current === undefined ? undefined : o.key(current))
      if (changed && value !== undefined) o.said(value)
      else if (changed && current !== undefined) o.cleared?.(current)
      current = value
    },
  }
}

/** A problem said in words: logged at `level` when it starts or its code changes, at info when it ends. */
export interface Problem {
  code: string
  words: string
}

export function createProblemNote(
  logger: Logger,
  o: { level: 'warn' | 'error'; fields: object; prefix: string; cleared: string },
): Note<Problem> {
  return createNote<Problem>({
    key: (p) => p.code,
    said: (p) => logger[o.level](o.fields, `${o.prefix}${p.words}`),
    cleared: () => logger.info(o.fields, o.cleared),
  })
}

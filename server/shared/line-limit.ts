/**
 * Writes at most `perWindow` lines of one kind in each `windowMs`, and counts
 * the rest: the first line of the next window carries how many were left out
 * (`leftOut`). A flood of refused or cut connections, each worth a line,
 * wrote tens of megabytes a minute; this keeps the first few, then the count.
 */
export function createLineLimit(o: { perWindow?: number; windowMs?: number; now?: () => number } = {}) {
  const perWindow = o.perWindow ?? 10
  const windowMs = o.windowMs ?? 60_000
  const now = o.now ?? Date.now
  const kinds = new Map<string, { since: number; written: number; leftOut: number }>()
  /** Calls `write` with how many lines of this kind were left out before it, or leaves this one out. */
  return (kind: string, write: (leftOut: number) => void): void => {
    const t = now()
    let k = kinds.get(kind)
    if (!k || t - k.since >= windowMs) {
      const leftOut = k?.leftOut ?? 0
      kinds.set(kind, (k = { since: t, written: 0, leftOut: 0 }))
      k.written++
      return write(leftOut)
    }
    if (k.written >= perWindow) {
      k.leftOut++
      return
    }
    k.written++
    write(0)
  }
}

/** The field a limited line adds when lines like it were left out. */
export const leftOutField = (leftOut: number): { leftOutSinceLast?: number } => (leftOut > 0 ? { leftOutSinceLast: leftOut } : {})

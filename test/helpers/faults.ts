import type { FaultPoint, Faults } from '../../server/shared/faults.ts'

/**
 * Faults that stop the work for good at `point`: one JSON line on stdout
 * (`{"faultPoint":…,"groupId":…}`) says it got there, then the promise never
 * resolves, so a crash test SIGKILLs the process exactly there instead of
 * guessing with timers.
 */
export function stopAt(point: FaultPoint, write: (line: string) => void = (line) => process.stdout.write(line)): Faults {
  return {
    reached(at, where) {
      if (at !== point) return Promise.resolve()
      write(
        `${JSON.stringify({ level: 40, time: Date.now(), faultPoint: at, ...where, msg: 'fault point reached: waiting to be killed' })}\n`,
      )
      return new Promise<void>(() => {})
    },
  }
}

/** Faults that only note each point reached, in order, for a test to look at. */
export function recordFaults(): Faults & { seen: { point: FaultPoint; groupId: number }[] } {
  const seen: { point: FaultPoint; groupId: number }[] = []
  return {
    seen,
    reached(point, where) {
      seen.push({ point, groupId: where.groupId })
      return Promise.resolve()
    },
  }
}

/** Faults that hold the work at `point` until the test lets it go: `reached` resolves with the group's id once it is there. */
export function holdAt(point: FaultPoint): Faults & { held: Promise<number>; release(): void } {
  let arrived!: (groupId: number) => void
  let go!: () => void
  const held = new Promise<number>((resolve) => (arrived = resolve))
  const released = new Promise<void>((resolve) => (go = resolve))
  return {
    held,
    release: () => go(),
    reached(at, where) {
      if (at !== point) return Promise.resolve()
      arrived(where.groupId)
      return released
    },
  }
}

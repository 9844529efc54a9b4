/**
 * Points in the gateway's work where a test may step in: stop there to be
 * killed (crash tests), or hold the work while it looks at the disk.
 * - `car-writing`: a group's CAR is being written (on the main thread: after its
 *   first block, a half-written temp CAR on disk; with sealing threads: before
 *   the job goes to one);
 * - `offload`: the group is offloaded in the store, its local files not yet removed;
 * - `reload`: a repair reload has written its first block to the temp file.
 */
export const FAULT_POINTS = ['car-writing', 'offload', 'reload'] as const
export type FaultPoint = (typeof FAULT_POINTS)[number]

/** Awaited at each fault point; the work goes on when it resolves. */
export interface Faults {
  reached(point: FaultPoint, where: { groupId: number }): Promise<void>
}

/** What production runs: nothing happens at any point. */
export const noFaults: Faults = { reached: () => Promise.resolve() }

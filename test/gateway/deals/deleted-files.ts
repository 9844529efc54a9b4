import { afterEach } from 'vitest'
import { startDealStack, type DealStack } from './harness.ts'

/**
 * What the tests of deleted files (retire*.test.ts, compact*.test.ts) share: one deal stack per test, closed
 * after it, and how they read a file's groups and a group's liveness marks.
 */
export function dealStackPerTest(): { start: typeof startDealStack } {
  let stack: DealStack | undefined
  afterEach(async () => {
    await stack?.close()
    stack = undefined
  })
  return { start: async (o) => (stack = await startDealStack(o)) }
}

/** `n` bytes of a pattern that differs by `seed`, so that files do not deduplicate. */
export const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 17 + (i >> 8)) & 0xff)
export const details = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.details
export const groupIdsOf = async (s: DealStack, path: string): Promise<number[]> =>
  (await details(s, path)).groups.map((g: { groupId: number }) => g.groupId)
export const groupIdOf = async (s: DealStack, path: string): Promise<number> => (await groupIdsOf(s, path))[0]
/** The group's row, with its dead, retired and compaction marks. */
export const groupRow = async (s: DealStack, id: number) => (await s.gateway.content.group(id))!
/** A PDP piece as `dataSet/piece`, to count removals and adds by. */
export const pieceKey = (p: { dataSetId?: bigint | number; pieceId?: bigint | number }) => `${p.dataSetId}/${p.pieceId}`

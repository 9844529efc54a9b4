import type { Logger } from '../../shared/logger.ts'
import type { RouteHeads } from './copies.ts'
import { createNote, type Note } from './note.ts'
import type { StorageRoute } from './route.ts'

/**
 * Reads every route's chain head, side by side, once a pass: the deal
 * market's Lotus chain and the Onchain Cloud's FEVM chain are two chains with
 * two clocks. A route whose chain does not answer is left out of the heads
 * (its copies wait for the next pass), said in the log once when it starts
 * and once when it ends, not every pass.
 */
export function createHeadReader(routes: readonly StorageRoute[], logger: Logger): () => Promise<RouteHeads> {
  const notes = new Map<string, Note<Error>>(
    routes.map((route) => [
      route.name,
      createNote<Error>({
        key: () => 'unread',
        said: (err) => logger.warn({ err, route: route.name }, "reading the route's chain head failed: its copies wait for the next tick"),
        cleared: () => logger.info({ route: route.name }, "the route's chain head is read again"),
      }),
    ]),
  )
  return async () => {
    const read = await Promise.all(
      routes.map(async (route) => {
        const note = notes.get(route.name)!
        try {
          const head = await route.chainHead()
          note.set(undefined)
          return [route.name, head] as const
        } catch (err) {
          note.set(err as Error)
          return undefined
        }
      }),
    )
    return new Map(read.filter((x) => x !== undefined))
  }
}

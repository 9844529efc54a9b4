import type { Logger } from '../../shared/logger.ts'
import { GatewayError } from '../errors.ts'
import type { GroupRecord, RemoteBlocks, RemoteCopy, RemoteSource } from './types.ts'
import { blockMatchesCid } from './verify-block.ts'

export const contentUnavailable = (detail: string) =>
  new GatewayError(503, 'CONTENT_UNAVAILABLE', `Offloaded data could not be fetched back (${detail})`, { 'Retry-After': '60' })

/**
 * Blocks of offloaded groups for one read, each from the first provider that
 * sends it intact (hash and length checked). A provider that fails or lies
 * moves to the back of its group's list for the rest of the read, so the
 * next blocks go to one that served. No provider left: 503 CONTENT_UNAVAILABLE.
 */
export function remoteBlocks(o: {
  source: RemoteSource | undefined
  group: (id: number) => Promise<GroupRecord | undefined>
  logger: Logger
  signal: AbortSignal
}): RemoteBlocks {
  const copies = new Map<number, Promise<RemoteCopy[]>>()
  const copiesOf = (groupId: number) => {
    let p = copies.get(groupId)
    if (!p) {
      p = (async () => {
        const group = await o.group(groupId)
        return group && o.source ? o.source.sources(group) : []
      })()
      copies.set(groupId, p)
    }
    return p
  }

  return {
    async prepare(groupIds) {
      for (const id of groupIds) if ((await copiesOf(id)).length === 0) throw contentUnavailable(`group ${id} has no provider to ask`)
    },
    async block(groupId, cid, length) {
      const list = await copiesOf(groupId)
      const tried: string[] = []
      for (const copy of [...list]) {
        o.signal.throwIfAborted()
        try {
          const bytes = await copy.block(cid, o.signal)
          if (bytes.length !== length || !(await blockMatchesCid(cid, bytes)))
            throw new Error(`provider sent bytes that are not block ${cid}`)
          return bytes
        } catch (err) {
          if (o.signal.aborted) throw err
          tried.push(copy.provider)
          o.logger.warn({ err, groupId, provider: copy.provider, cid }, 'block from provider failed; trying the next')
          // Later blocks of this read ask the others first.
          const at = list.indexOf(copy)
          if (at >= 0) list.push(...list.splice(at, 1))
        }
      }
      throw contentUnavailable(`block ${cid}: ${tried.length} provider(s) tried`)
    },
  }
}

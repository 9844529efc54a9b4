import { randomFillSync } from 'node:crypto'
import type { StorageProviderPort } from '../../server/gateway/deals/index.ts'
import { startDealStack, type DealStack } from './deal-stack.ts'

export interface OffloadedRead {
  label: string
  /** Bytes of blocks in the file's group. */
  groupSize: number
  firstByteMs: number
  mbPerSecond: number
  /** Bytes the gateway received from providers for this read. */
  fetchedBytes: number
  requests: number
}

/**
 * One file of `fileMiB` read out of an offloaded group of `groupMiB`, on the
 * deal test stack (a simulated network, providers serving HTTP on loopback):
 * before, as reads worked until now (the whole group reloaded, then read from
 * disk: what repair's holdForDeals still does), and after (only the file's
 * blocks fetched). Times from the request to the first and the last byte.
 */
export async function benchOffloadedRead(groupMiB: number, fileMiB: number): Promise<OffloadedRead[]> {
  const fetched = { bytes: 0, requests: 0 }
  const counting = (port: StorageProviderPort): StorageProviderPort => ({
    ...port,
    async retrieveBlock(provider, pieceCid, cid, options) {
      const bytes = await port.retrieveBlock(provider, pieceCid, cid, options)
      fetched.bytes += bytes.length
      fetched.requests++
      return bytes
    },
    retrievePiece(provider, pieceCid, carSize, options) {
      fetched.requests++
      return (async function* () {
        for await (const chunk of port.retrievePiece(provider, pieceCid, carSize, options)) {
          fetched.bytes += chunk.length
          yield chunk
        }
      })()
    },
  })
  const groupBytes = groupMiB * 2 ** 20
  const fileBytes = fileMiB * 2 ** 20
  let groupSize = 0
  const s = await startDealStack({
    copies: 2,
    groupSize: groupBytes,
    providers: counting,
    dealTimeouts: { callMs: 30_000, reloadMs: 600_000 },
    transferTimeoutMs: 600_000,
  })
  try {
    // The file first, so it opens the group; the filler fills it up to its size (any spill goes to a second group).
    const file = randomFillSync(Buffer.alloc(fileBytes))
    const filler = randomFillSync(Buffer.alloc(groupBytes))
    for (const [path, body] of [
      ['/one.bin', file],
      ['/filler.bin', filler],
    ] as const) {
      const res = await s.put(path, body)
      if (res.status !== 201) throw new Error(`PUT ${path} answered ${res.status}`)
    }
    await s.seal()
    await untilOffloaded(s)
    const groups = (await s.fileInfo('/one.bin')).result.file.details.groups as { groupId: number }[]
    if (groups.length !== 1) throw new Error(`the file spans ${groups.length} groups`)
    const group = (await s.gateway.content.group(groups[0].groupId))!
    groupSize = group.size
    const groupId = group.id

    const read = async (label: string, before?: () => Promise<() => Promise<void>>): Promise<OffloadedRead> => {
      fetched.bytes = 0
      fetched.requests = 0
      const started = performance.now()
      const release = await before?.()
      const res = await s.get('/one.bin')
      if (res.status !== 200) throw new Error(`GET /one.bin answered ${res.status}`)
      let firstByteMs = 0
      const chunks: Uint8Array[] = []
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        firstByteMs ||= performance.now() - started
        chunks.push(chunk)
      }
      const seconds = (performance.now() - started) / 1000
      await release?.()
      if (!Buffer.concat(chunks).equals(file)) throw new Error(`${label}: the bytes read back differ`)
      return {
        label,
        groupSize,
        firstByteMs,
        mbPerSecond: fileBytes / 1e6 / seconds,
        fetchedBytes: fetched.bytes,
        requests: fetched.requests,
      }
    }
    const after = await read('after: only its blocks')
    const before = await read('before: whole-group reload', () => s.gateway.content.holdForDeals(groupId))
    return [before, after]
  } finally {
    await s.close()
  }
}

/** Ticks the deal engine until every group is offloaded, holding the clock while providers still fetch CARs (so deals do not start before they are published). */
async function untilOffloaded(s: DealStack): Promise<void> {
  const deadline = Date.now() + 15 * 60_000
  for (;;) {
    const groups = await s.gateway.content.groups()
    if (groups.every((g) => g.state === 'offloaded')) return
    if (Date.now() > deadline) throw new Error(`groups still ${groups.map((g) => g.state).join(', ')} after 15 minutes`)
    await s.gateway.deals!.tick()
    await s.service.sync.syncOnce()
    const deals = (await Promise.all(groups.map((g) => s.gateway.dealStore.ofGroup(g.id)))).flat()
    // Time stands still while a provider still fetches a CAR (in wall-clock time); a Curio-like one then says
    // nothing of its deal until it is sealed, which takes chain time.
    const transferring = deals.some(
      (d) => d.state === 'proposing' || (d.state === 'proposed' && s.sim.proposalState(d.provider, d.proposalId!).state === 'transferring'),
    )
    if (transferring) await new Promise((r) => setTimeout(r, 250))
    else s.advance(60)
  }
}

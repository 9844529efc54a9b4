import type { GroupRecord } from '../../content/index.ts'
import { countingCopies, providersToSkip } from '../copies.ts'
import type { StorageRoute } from '../route.ts'
import type { TickReport } from '../types.ts'
import { counted, inWallTime } from '../../words.ts'
import { settleFromChain } from './adopt.ts'
import { providerIdOf, type PdpContext } from './context.ts'
import { canPay } from './funding.ts'
import { copiesOnChain } from './proofs.ts'
import { DATA_SET_METADATA, upload, uploadPieceCid } from './upload.ts'

/**
 * Starts background uploads of sendable groups short of PDP copies, while
 * the account can pay for them. Uploads side by side would each create
 * their own data set on the same providers while none exists yet, and the
 * lockup of the second no longer fits (seen on npm start with a 200 MiB
 * file: "execution reverted"); once the account has data sets on enough
 * providers, the SDK adds to them and uploads may run together.
 */
export async function placeCopies(
  p: PdpContext,
  route: Pick<StorageRoute, 'name' | 'lasting'>,
  head: number,
  r: TickReport,
  sendable: (g: GroupRecord) => boolean,
): Promise<void> {
  const { copies, maxUploads } = p.options
  await judgeUploads(p, route, head)
  const onChain = (await copiesOnChain(p)).filter((d) => d.dataSetId !== undefined)
  p.slots = new Set(onChain.map((d) => d.provider)).size >= copies ? maxUploads : 1
  for (const g of await p.content.groups()) {
    if (p.uploads.size >= p.slots) break
    if (p.uploads.has(g.id) || !sendable(g) || !g.pieceCid || !g.carSize) continue
    // A group whose last upload stored nothing waits (longer each time): the others go first.
    if (!p.retries.due(g.id)) continue
    if (g.carSize > p.options.maxUploadBytes) {
      if (!p.oversized.has(g.id)) p.logger.warn({ groupId: g.id, carSize: g.carSize }, 'group too large for a PDP upload: not sent')
      p.oversized.set(g.id, g.carSize)
      continue
    }
    let history = await p.deals.ofGroup(g.id, 'pdp')
    if (copies - countingCopies(route, history, head).length <= 0) {
      p.retries.forget(g.id)
      continue
    }
    // Before any upload again: the chain may hold copies no row records (adds that went through across a stop).
    await settleFromChain(p, g.id, uploadPieceCid(g), r)
    history = await p.deals.ofGroup(g.id, 'pdp')
    const counting = countingCopies(route, history, head).length
    const missing = copies - counting
    if (missing <= 0) {
      p.retries.forget(g.id)
      continue
    }
    // Neither a provider holding a copy nor one that failed a copy (or stopped keeping one) lately is asked.
    const skip = providersToSkip(history, {
      now: p.now(),
      epochSeconds: p.options.clock.epochSeconds,
      retryAfterEpochs: p.retryAfterEpochs,
    })
    const exclude = [...skip].map(providerIdOf)
    // Paid for together with the uploads under way, which the account has not yet locked funds for:
    // as many copies as are missing, on the providers the upload may use, in our data sets' metadata.
    const pending = [...p.uploads.values()].reduce((sum, u) => sum + u.upload.total, 0)
    if (!(await canPay(p, g.carSize + pending, { copies: missing, excludeProviderIds: exclude, metadata: DATA_SET_METADATA }))) return
    p.logger.info({ groupId: g.id, copies: missing, exclude }, 'uploading group to PDP providers')
    await upload(p, g, missing, exclude, head, r)
    const started = p.uploads.get(g.id)
    if (started) {
      const sent: { before: number; settledMs?: number } = { before: counting }
      p.sent.set(g.id, sent)
      void started.done.finally(() => (sent.settledMs = p.now()))
    }
  }
}

/**
 * Uploads that settled since the last pass: one that stored a copy ends the
 * group's back-off (and a funds refusal it met before: the account paid);
 * one that stored none makes the group wait longer before it is sent again.
 */
async function judgeUploads(p: PdpContext, route: Pick<StorageRoute, 'name' | 'lasting'>, head: number): Promise<void> {
  for (const [groupId, { before, settledMs }] of p.sent) {
    if (settledMs === undefined) continue
    p.sent.delete(groupId)
    if (countingCopies(route, await p.deals.ofGroup(groupId, 'pdp'), head).length > before) {
      p.retries.forget(groupId)
      if (p.funds.current?.code === 'WALLET_SHORT') p.funds.set(undefined)
    } else if (p.retries.failed(groupId, settledMs) === 1) {
      p.logger.info({ groupId }, 'PDP upload stored no copy: the group waits, longer after each failure, while other groups are sent')
    }
  }
}

/**
 * What keeps a group from being sent now, beyond funds and its size: its
 * back-off after an upload that stored nothing (when it is tried next), or
 * the uploads under way taking every slot.
 */
export function heldBack(p: PdpContext, groupId: number): { nextTry?: string; slotTaken?: string } {
  if (p.uploads.has(groupId)) return {}
  const at = p.retries.at(groupId)
  if (at !== undefined && at > p.now())
    return { nextTry: inWallTime(Math.ceil((at - p.now()) / 1000 / p.options.clock.epochSeconds), p.options.clock.epochSeconds) }
  if (p.uploads.size < p.slots) return {}
  const uploading = counted(p.uploads.size, 'other group is', 'other groups are')
  return {
    slotTaken:
      p.slots < p.options.maxUploads
        ? `waiting for its turn to upload to PDP providers: ${uploading} uploading, one at a time until the account has data sets on ${counted(p.options.copies, 'provider', 'providers')}`
        : `waiting for its turn to upload to PDP providers: ${uploading} uploading, ${p.slots} at a time`,
  }
}

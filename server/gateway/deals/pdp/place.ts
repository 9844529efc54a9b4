import type { GroupRecord } from '../../content/index.ts'
import { countingCopies, providersToSkip } from '../copies.ts'
import { createPacer } from '../pacer.ts'
import type { StorageRoute } from '../route.ts'
import type { RouteContext, TickReport } from '../types.ts'
import { counted, inWallTime } from '../../words.ts'
import type { Adoption } from './adopt.ts'
import type { PdpFunds } from './funding.ts'
import { copiesOnChain } from './proofs.ts'
import { providerIdOf } from './provider-name.ts'
import type { ChainPace, PdpRouteOptions } from './types.ts'
import { DATA_SET_METADATA, uploadPieceCid, type Uploads } from './upload.ts'

/**
 * A group whose upload stored no copy waits before it is sent again: 4 epochs
 * (2 minutes of chain time), doubling up to the route's retry wait, so that
 * one failing group does not take every pass's upload from the others.
 */
const UPLOAD_RETRY_FIRST_EPOCHS = 4

/** Which groups are sent to PDP providers, when, and how many at once. */
export interface Placer {
  /**
   * Starts background uploads of sendable groups short of PDP copies, while
   * the account can pay for them. Uploads side by side would each create
   * their own data set on the same providers while none exists yet, and the
   * lockup of the second no longer fits (seen on npm start with a 200 MiB
   * file: "execution reverted"); once the account has data sets on enough
   * providers, the SDK adds to them and uploads may run together.
   */
  place(route: Pick<StorageRoute, 'name' | 'lasting'>, head: number, r: TickReport, sendable: (g: GroupRecord) => boolean): Promise<void>
  /**
   * What keeps a group from being sent now, beyond funds and its size: its
   * back-off after an upload that stored nothing (when it is tried next), or
   * the uploads under way taking every slot.
   */
  heldBack(groupId: number): { nextTry?: string; slotTaken?: string }
  /** The group's CAR size when it is larger than one upload takes (it is never sent). */
  oversized(groupId: number): number | undefined
}

export interface PlacerOptions
  extends
    Pick<RouteContext, 'deals' | 'content' | 'logger' | 'now' | 'retryAfterEpochs'>,
    Pick<PdpRouteOptions, 'copies' | 'maxUploads' | 'maxUploadBytes'>,
    ChainPace {
  uploads: Uploads
  funds: Pick<PdpFunds, 'canPay' | 'uploadStored'>
  adoption: Pick<Adoption, 'settle'>
}

export function createPlacer(o: PlacerOptions): Placer {
  const { deals, content, logger, uploads } = o
  const epochMs = o.epochSeconds * 1000
  /** When each group whose last upload stored no copy may be sent again (back-off, doubling). */
  const retries = createPacer<number>({
    now: o.now,
    everyMs: 0,
    backoff: { firstMs: UPLOAD_RETRY_FIRST_EPOCHS * epochMs, maxMs: Math.max(UPLOAD_RETRY_FIRST_EPOCHS, o.retryAfterEpochs) * epochMs },
  })
  /**
   * Groups sent, with their counting copies before and when the upload settled: the next pass sees whether
   * it stored one (the wait after one that did not runs from when it settled).
   */
  const sent = new Map<number, { before: number; settledMs?: number }>()
  /** Uploads that may run at once, as the last placing pass worked it out (one until the account has its data sets). */
  let slots = 1
  /** Groups whose CAR is larger than one upload takes, by their CAR's size: never sent. */
  const oversized = new Map<number, number>()

  /**
   * Uploads that settled since the last pass: one that stored a copy ends the
   * group's back-off (and a funds refusal it met before: the account paid);
   * one that stored none makes the group wait longer before it is sent again.
   */
  async function judgeUploads(route: Pick<StorageRoute, 'name' | 'lasting'>, head: number): Promise<void> {
    for (const [groupId, { before, settledMs }] of sent) {
      if (settledMs === undefined) continue
      sent.delete(groupId)
      if (countingCopies(route, await deals.ofGroup(groupId, 'pdp'), head).length > before) {
        retries.forget(groupId)
        o.funds.uploadStored()
      } else if (retries.failed(groupId, settledMs) === 1) {
        logger.info({ groupId }, 'PDP upload stored no copy: the group waits, longer after each failure, while other groups are sent')
      }
    }
  }

  return {
    async place(route, head, r, sendable) {
      const { copies, maxUploads } = o
      await judgeUploads(route, head)
      const onChain = (await copiesOnChain(deals)).filter((d) => d.dataSetId !== undefined)
      slots = new Set(onChain.map((d) => d.provider)).size >= copies ? maxUploads : 1
      for (const g of await content.groups()) {
        if (uploads.count() >= slots) break
        if (uploads.of(g.id) || !sendable(g) || !g.pieceCid || !g.carSize) continue
        // A group whose last upload stored nothing waits (longer each time): the others go first.
        if (!retries.due(g.id)) continue
        if (g.carSize > o.maxUploadBytes) {
          if (!oversized.has(g.id)) logger.warn({ groupId: g.id, carSize: g.carSize }, 'group too large for a PDP upload: not sent')
          oversized.set(g.id, g.carSize)
          continue
        }
        let history = await deals.ofGroup(g.id, 'pdp')
        if (copies - countingCopies(route, history, head).length <= 0) {
          retries.forget(g.id)
          continue
        }
        // Before any upload again: the chain may hold copies no row records (adds that went through across a stop).
        await o.adoption.settle(g.id, uploadPieceCid(g), r)
        history = await deals.ofGroup(g.id, 'pdp')
        const counting = countingCopies(route, history, head).length
        const missing = copies - counting
        if (missing <= 0) {
          retries.forget(g.id)
          continue
        }
        // Neither a provider holding a copy nor one that failed a copy (or stopped keeping one) lately is asked.
        const skip = providersToSkip(history, { now: o.now(), epochSeconds: o.epochSeconds, retryAfterEpochs: o.retryAfterEpochs })
        const exclude = [...skip].map(providerIdOf)
        // Paid for together with the uploads under way, which the account has not yet locked funds for:
        // as many copies as are missing, on the providers the upload may use, in our data sets' metadata.
        const request = { copies: missing, excludeProviderIds: exclude, metadata: DATA_SET_METADATA }
        if (!(await o.funds.canPay(g.carSize + uploads.pendingBytes(), request))) return
        logger.info({ groupId: g.id, copies: missing, exclude }, 'uploading group to PDP providers')
        const started = await uploads.start(g, missing, exclude, head, r)
        if (started) {
          const settled: { before: number; settledMs?: number } = { before: counting }
          sent.set(g.id, settled)
          void started.done.finally(() => (settled.settledMs = o.now()))
        }
      }
    },

    heldBack(groupId) {
      if (uploads.of(groupId)) return {}
      const at = retries.at(groupId)
      if (at !== undefined && at > o.now())
        return { nextTry: inWallTime(Math.ceil((at - o.now()) / 1000 / o.epochSeconds), o.epochSeconds) }
      if (uploads.count() < slots) return {}
      const uploading = counted(uploads.count(), 'other group is', 'other groups are')
      return {
        slotTaken:
          slots < o.maxUploads
            ? `waiting for its turn to upload to PDP providers: ${uploading} uploading, one at a time until the account has data sets on ${counted(o.copies, 'provider', 'providers')}`
            : `waiting for its turn to upload to PDP providers: ${uploading} uploading, ${slots} at a time`,
      }
    },
    oversized: (groupId) => oversized.get(groupId),
  }
}

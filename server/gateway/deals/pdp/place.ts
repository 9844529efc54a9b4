import type { GroupRecord } from '../../content/index.ts'
import { countingCopies, providersToSkip } from '../copies.ts'
import type { StorageRoute } from '../route.ts'
import type { TickReport } from '../types.ts'
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
  const onChain = (await copiesOnChain(p)).filter((d) => d.dataSetId !== undefined)
  const concurrent = new Set(onChain.map((d) => d.provider)).size >= copies ? maxUploads : 1
  for (const g of await p.content.groups()) {
    if (p.uploads.size >= concurrent) break
    if (p.uploads.has(g.id) || !sendable(g) || !g.pieceCid || !g.carSize) continue
    if (g.carSize > p.options.maxUploadBytes) {
      if (!p.oversized.has(g.id)) p.logger.warn({ groupId: g.id, carSize: g.carSize }, 'group too large for a PDP upload: not sent')
      p.oversized.set(g.id, g.carSize)
      continue
    }
    let history = await p.deals.ofGroup(g.id, 'pdp')
    if (copies - countingCopies(route, history, head).length <= 0) continue
    // Before any upload again: the chain may hold copies no row records (adds that went through across a stop).
    await settleFromChain(p, g.id, uploadPieceCid(g), r)
    history = await p.deals.ofGroup(g.id, 'pdp')
    const missing = copies - countingCopies(route, history, head).length
    if (missing <= 0) continue
    // Neither a provider holding a copy nor one that failed a copy (or stopped keeping one) lately is asked.
    const skip = providersToSkip(history, { now: p.now(), epochSeconds: p.options.epochSeconds, retryAfterEpochs: p.retryAfterEpochs })
    const exclude = [...skip].map(providerIdOf)
    // Paid for together with the uploads under way, which the account has not yet locked funds for:
    // as many copies as are missing, on the providers the upload may use, in our data sets' metadata.
    const pending = [...p.uploads.values()].reduce((sum, u) => sum + u.upload.total, 0)
    if (!(await canPay(p, g.carSize + pending, { copies: missing, excludeProviderIds: exclude, metadata: DATA_SET_METADATA }))) return
    p.logger.info({ groupId: g.id, copies: missing, exclude }, 'uploading group to PDP providers')
    await upload(p, g, missing, exclude, head, r)
  }
}

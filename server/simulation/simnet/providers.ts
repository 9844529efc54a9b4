import { EPOCHS_PER_DAY } from '../../shared/epochs.ts'
import type { ProviderTerms, TransferType } from '../../shared/chain.ts'
import { between, pick } from './random.ts'

const GiB = 1024 ** 3
const TiB = 1024 * GiB

export interface SimProvider {
  id: string
  /** Fixed terms; `busy` is computed per day around the head. */
  terms: Omit<ProviderTerms, 'busy'>
}

/** The seeded set of storage providers of the simulated network. */
export function generateProviders(rand: (...labels: (string | number)[]) => number, count: number): SimProvider[] {
  const providers: SimProvider[] = []
  const used = new Set<string>()
  for (let i = 0; providers.length < count; i++) {
    const id = `f0${between(rand('provider-id', i), 10_000, 3_999_999)}`
    if (used.has(id)) continue
    used.add(id)
    const r = (label: string) => rand('provider', id, label)
    const transfer: TransferType[] = ['http']
    if (r('graphsync') < 0.6) transfer.push('graphsync')
    if (r('libp2p') < 0.4) transfer.push('libp2p')
    if (r('manual') < 0.3) transfer.push('manual')
    providers.push({
      id,
      terms: {
        id,
        online: r('online') >= 0.1,
        verifiedPrice: pick(r('vprice'), ['0', '0', '0', '1000000', '5000000']),
        unverifiedPrice: pick(r('uprice'), ['0', '10000000', '50000000', '100000000', '200000000']),
        acceptsVerified: r('verified') >= 0.1,
        acceptsUnverified: r('unverified') >= 0.3,
        transferTypes: transfer,
        minPieceSize: pick(r('minpiece'), [256, 1024 ** 2, 256 * 1024 ** 2, GiB]),
        maxPieceSize: pick(r('maxpiece'), [32 * GiB, 64 * GiB]),
        minDuration: pick(r('mindur'), [180 * EPOCHS_PER_DAY, 180 * EPOCHS_PER_DAY, 365 * EPOCHS_PER_DAY]),
        maxDuration: pick(r('maxdur'), [540 * EPOCHS_PER_DAY, 1278 * EPOCHS_PER_DAY, 1278 * EPOCHS_PER_DAY]),
        minStartLead: pick(r('lead'), [240, 960, 2880, 4320]),
        freeCapacity: between(r('capacity'), 0, 500) * TiB,
        allowedClients: r('allowlist') < 0.1 ? [`f0${between(r('allowed'), 100, 999)}`] : null,
      },
    })
  }
  return providers.sort((a, b) => Number(a.id.slice(2)) - Number(b.id.slice(2)))
}

/** Whole days (of epochs) in which a provider takes no new deals: about one day in ten. */
export function isBusyDay(rand: (...labels: (string | number)[]) => number, providerId: string, day: number): boolean {
  return rand('busy', providerId, day) < 0.1
}

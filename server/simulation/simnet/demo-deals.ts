import { createHash } from 'node:crypto'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { EPOCHS_PER_DAY } from '../../shared/epochs.ts'
import type { DealProposal } from '../../shared/chain.ts'
import type { SimProvider } from './providers.ts'
import { between } from './random.ts'

/**
 * `count` deals for a client as if proposed over the past 400 days (demos,
 * benchmarks): seeded by the network's seed, the client and their rank, so
 * that every process draws the same ones.
 */
export function* demoDeals(
  o: { seed: string; rand: (...labels: (string | number)[]) => number; providers: readonly SimProvider[]; head: number },
  clientId: string,
  count: number,
): Generator<{ proposal: DealProposal; proposedEpoch: number }> {
  const { rand, providers, head } = o
  for (let i = 0; i < count; i++) {
    const r = (label: string) => rand('seeded-deal', clientId, i, label)
    const provider = providers[between(r('provider'), 0, providers.length - 1)]
    const proposedEpoch = Math.max(0, head - between(r('age'), 0, 400 * EPOCHS_PER_DAY))
    const start = proposedEpoch + between(r('lead'), 2880, 10_080)
    const verified = r('verified') < 0.7
    yield {
      proposal: {
        PieceCID: { '/': seededPieceCid(`${o.seed}/${clientId}/${i}`) },
        PieceSize: 2 ** between(r('size'), 20, 35),
        VerifiedDeal: verified,
        Client: clientId,
        Provider: provider.id,
        Label: '',
        StartEpoch: start,
        EndEpoch: start + between(r('duration'), 180, 540) * EPOCHS_PER_DAY,
        StoragePricePerEpoch: verified ? provider.terms.verifiedPrice : provider.terms.unverifiedPrice,
        ProviderCollateral: '0',
        ClientCollateral: '0',
      },
      proposedEpoch,
    }
  }
}

/** A well-formed piece CID (fil-commitment-unsealed, sha2-256-trunc254-padded) for a seeded demo deal. */
function seededPieceCid(seed: string): string {
  const bytes = createHash('sha256').update(seed).digest()
  // CommP zeroes the two top bits of the last byte (254-bit field element).
  bytes[31] &= 0x3f
  return CID.create(1, 0xf101, Digest.create(0x1012, bytes)).toString()
}

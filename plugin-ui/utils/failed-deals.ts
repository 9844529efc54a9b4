import type { CopyFailureCode } from '../../server/shared/contracts/copy-failure.ts'
import type { FailedDeal } from '../types.ts'

import { n, t } from '@nextcloud/l10n'

/**
 * The one line a group's failed deals fold into: "1 provider failed to seal,
 * replaced", "2 providers failed to seal; 1 replaced".
 */
export function failedDealsSummary(failed: readonly FailedDeal[]): string {
  const replaced = failed.filter((d) => d.replaced).length
  if (replaced === failed.length)
    return n('gateway', '%n provider failed to seal, replaced', '%n providers failed to seal; replaced', failed.length)
  if (replaced === 0)
    return n('gateway', '%n provider failed to seal, not replaced yet', '%n providers failed to seal; not replaced yet', failed.length)
  return t('gateway', '{failed} providers failed to seal; {replaced} replaced', { failed: failed.length, replaced })
}

/** Each failure code of the gateway (shared/contracts/copy-failure.ts) in plain words; `words` are the provider's own. */
const FAILURE_WORDS: Record<CopyFailureCode, (words: string) => string> = {
  PROVIDER_DECLINED: (words) => t('gateway', 'the provider declined: {words}', { words }),
  PROVIDER_FAILED: (words) => t('gateway', 'the provider gave up: {words}', { words }),
  PROVIDER_REFUSED: () => t('gateway', 'the provider refused the data'),
  PROVIDER_UNREACHABLE: () => t('gateway', 'the provider could not be reached'),
  PROVIDER_PROTOCOL_ERROR: () => t('gateway', 'the provider answered outside the protocol'),
  PROPOSAL_TIMEOUT: () => t('gateway', 'no answer to the proposal in time'),
  PROPOSAL_UNANSWERED: () => t('gateway', 'the proposal went unanswered'),
  PROPOSAL_LOST: () => t('gateway', 'the provider lost the deal'),
  PROPOSAL_EXPIRED: () => t('gateway', 'not published before the deal was due to start'),
  NOT_ON_CHAIN: () => t('gateway', 'never published on chain'),
  CHAIN_DEAL_MISMATCH: () => t('gateway', 'the deal on chain is not the one signed'),
  NOT_SEALED_IN_TIME: () => t('gateway', 'not sealed before the deal was due to start'),
  SLASHED: () => t('gateway', 'the provider lost the sector'),
  EXPIRED: () => t('gateway', 'the deal ended'),
  INTERRUPTED: () => t('gateway', 'interrupted when the gateway restarted'),
  STOPPED_BEFORE_ADD: () => t('gateway', 'interrupted when the gateway restarted, before the provider added it'),
  EXTRA_COPY: () => t('gateway', 'a second copy on the same provider, removed'),
  CHAIN_UNREACHABLE: () => t('gateway', "interrupted: the chain's node did not answer"),
  UPLOAD_STALLED: () => t('gateway', 'the upload stalled'),
  NEVER_PROVED: () => t('gateway', 'never proved on chain'),
  MISSED_PROOFS: () => t('gateway', 'the provider stopped proving it'),
  PIECE_REMOVED: () => t('gateway', 'the piece was removed'),
  DATA_SET_TERMINATED: () => t('gateway', 'the data set was ended'),
  RETRIEVAL_FAILED: () => t('gateway', 'the provider did not serve it back'),
  RETIRED: () => t('gateway', 'its files were deleted: no longer stored or paid for'),
  UNKNOWN: (words) => words,
}

/**
 * Why a deal failed, in plain words: worded by its code, the provider's own
 * words shown where the code says they are its words; a gateway that sends
 * no code (CIDgravity's) is shown as it said it.
 */
export function failureReason(deal: Pick<FailedDeal, 'reason' | 'reasonCode'>): string {
  return deal.reasonCode ? FAILURE_WORDS[deal.reasonCode](deal.reason) : deal.reason
}

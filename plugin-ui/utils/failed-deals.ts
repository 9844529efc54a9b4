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

/** The gateway's reason codes in plain words; a provider's own words are shown as they came. */
export function failureReason(reason: string): string {
  if (reason.startsWith('CHAIN_DEAL_MISMATCH')) return t('gateway', 'the deal on chain is not the one signed')
  const words: Record<string, () => string> = {
    SEALING_FAILED: () => t('gateway', 'sealing failed'),
    NOT_SEALED_IN_TIME: () => t('gateway', 'not sealed before the deal was due to start'),
    PROPOSAL_EXPIRED: () => t('gateway', 'not published before the deal was due to start'),
    NOT_ON_CHAIN: () => t('gateway', 'never published on chain'),
    PROPOSAL_LOST: () => t('gateway', 'the provider lost the deal'),
    RETRIEVAL_FAILED: () => t('gateway', 'the data could not be retrieved'),
    TRANSFER_FAILED: () => t('gateway', 'the provider could not fetch the data'),
    TRANSFER_TIMEOUT: () => t('gateway', 'the provider could not fetch the data in time'),
  }
  return words[reason]?.() ?? reason
}

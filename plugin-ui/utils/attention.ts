import type { AttentionReasonCode } from '../../server/shared/contracts/folder-states.ts'

import { t } from '@nextcloud/l10n'

/**
 * What a person has to act on (or ask an admin to), one label per attention
 * code: the codes the Files list's badge shows as "needs attention"
 * (server/shared/contracts/folder-states.ts). A code added there fails the
 * typecheck here until it has its words.
 */
const NEEDS: Record<AttentionReasonCode, () => string> = {
  WAITING_FOR_DISK_SPACE: () => t('gateway', "Needs attention: the gateway's disk is full"),
  NO_DEAL_SERVICE: () => t('gateway', 'Needs attention: the gateway has no deal service'),
  WAITING_FOR_FUNDS: () => t('gateway', 'Needs attention: no funds'),
  DEAL_SERVICE_UNREACHABLE: () => t('gateway', 'Needs attention: the deal service cannot be reached'),
  NO_PROVIDER: () => t('gateway', 'Needs attention: no storage provider takes it'),
  CONTRACT_REFUSED: () => t('gateway', "Needs attention: the Onchain Cloud's contracts refuse the gateway"),
  CHAIN_UNREACHABLE: () => t('gateway', "Needs attention: the Onchain Cloud's chain cannot be reached"),
  PROOF_MISSED: () => t('gateway', 'Needs attention: a copy missed its proof'),
}

/** The label of a group whose reason needs a person, or undefined (no code, or one that passes by itself). */
export function attentionLabel(reasonCode: string | undefined): string | undefined {
  return reasonCode !== undefined && Object.hasOwn(NEEDS, reasonCode) ? NEEDS[reasonCode as AttentionReasonCode]() : undefined
}

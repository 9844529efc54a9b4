import { COPY_FAILURES, type CopyFailure, type CopyFailureCode } from '../../shared/contracts/copy-failure.ts'
import type { GatewayDealState } from './deal-state.ts'
import type { GroupDeal, RouteName } from './types.ts'

/** A row of `group_deals` as SQL gives it. */
export interface Row {
  id: number
  group_id: number
  provider: string
  piece_cid: string
  state: GatewayDealState
  proposal_id: string | null
  deal_id: number | null
  start_epoch: number
  end_epoch: number
  token_hash: string | null
  reason_code: string | null
  reason: string | null
  retrievable: number
  checked_ms: number | null
  failed_checks: number
  check_failed_ms: number | null
  proposal_epoch: number | null
  transfer_size: number | null
  route: RouteName
  add_tx_hash: string | null
  data_set_id: number | null
  piece_id: number | null
  added_epoch: number | null
  retrieval_url: string | null
  last_proof_epoch: number | null
  first_proof_due_epoch: number | null
  missed_proof_epoch: number | null
  stops_counting_epoch: number | null
  signed_proposal: Uint8Array | null
  proposal_cid: string | null
  provider_answer: string | null
  created_ms: number
  updated_ms: number
}

/** The row's failure; a code this version does not know (a newer gateway wrote it) reads as UNKNOWN, its words kept. */
function failureOf(r: Row): CopyFailure | undefined {
  if (!r.reason_code) return undefined
  const known = r.reason_code in COPY_FAILURES
  const code = (known ? r.reason_code : 'UNKNOWN') as CopyFailureCode
  const detail = known ? r.reason : [r.reason_code, r.reason].filter(Boolean).join(': ')
  return detail ? { code, detail } : { code }
}

/** Only what a row has: a column left NULL leaves its field out. */
export const present = <T extends object>(fields: T) =>
  Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null && v !== '')) as Partial<T>

export const toDeal = (r: Row): GroupDeal => {
  const failure = failureOf(r)
  return {
    id: r.id,
    groupId: r.group_id,
    route: r.route,
    provider: r.provider,
    pieceCid: r.piece_cid,
    state: r.state,
    startEpoch: r.start_epoch,
    endEpoch: r.end_epoch,
    retrievable: r.retrievable === 1,
    ...(failure ? { failure } : {}),
    ...(present({
      proposalId: r.proposal_id,
      dealId: r.deal_id,
      tokenHash: r.token_hash,
      checkedMs: r.checked_ms,
      // Absent while its checks pass.
      failedChecks: r.failed_checks || null,
      checkFailedMs: r.check_failed_ms,
      proposalEpoch: r.proposal_epoch,
      transferSize: r.transfer_size,
      addTxHash: r.add_tx_hash,
      dataSetId: r.data_set_id,
      pieceId: r.piece_id,
      addedEpoch: r.added_epoch,
      retrievalUrl: r.retrieval_url,
      lastProofEpoch: r.last_proof_epoch,
      firstProofDueEpoch: r.first_proof_due_epoch,
      missedProofEpoch: r.missed_proof_epoch,
      stopsCountingEpoch: r.stops_counting_epoch,
    }) as Partial<GroupDeal>),
    createdMs: r.created_ms,
    updatedMs: r.updated_ms,
  }
}

import { failureText, type CopyFailure } from '../../shared/contracts/copy-failure.ts'
import type { Sql } from '../../shared/sql/index.ts'
import { DEAL_TRANSITIONS, type GatewayDealState } from './deal-state.ts'
import type { DealStore } from './types.ts'

/** The store's methods that change a row. */
export type DealChanges = Pick<
  DealStore,
  | 'markProposed'
  | 'markPublished'
  | 'markActive'
  | 'markFailed'
  | 'markEnded'
  | 'recordPdpCopy'
  | 'recordAddTx'
  | 'recordProof'
  | 'recordCheck'
  | 'failInterrupted'
>

/** For each target state, the states a deal may move to it from. */
const FROM = Object.fromEntries(
  (Object.keys(DEAL_TRANSITIONS) as GatewayDealState[]).map((to) => [
    to,
    (Object.keys(DEAL_TRANSITIONS) as GatewayDealState[]).filter((from) => DEAL_TRANSITIONS[from].includes(to)),
  ]),
) as Record<GatewayDealState, GatewayDealState[]>

const inList = (states: readonly string[]) => states.map((s) => `'${s}'`).join(', ')

/** The deal store's writes over `sql`: each state change as one conditional UPDATE and its event, and the PDP and check records. */
export function createDealChanges(sql: Sql, now: () => number): DealChanges {
  /**
   * Moves a deal to `to` if DEAL_TRANSITIONS allows it from where it is, and
   * records the change, in one transaction; false (nothing written) otherwise.
   * The move is one conditional UPDATE (`… AND state IN (allowed)`): of two
   * racing transitions of one deal, on SQLite or on PostgreSQL's pool, exactly
   * one changes the row and the other finds it moved and does nothing.
   */
  const transition = (id: number, to: GatewayDealState, set: string, params: unknown[], reason?: string): Promise<boolean> =>
    sql.transaction(async (tx) => {
      const t = now()
      const { changes } = await tx.run(
        `UPDATE group_deals SET state = '${to}', ${set}updated_ms = ? WHERE id = ? AND state IN (${inList(FROM[to]) || 'NULL'})`,
        [...params, t, id],
      )
      if (changes === 0) return false
      await tx.run('INSERT INTO group_deal_events (deal_id, state, reason, at_ms) VALUES (?, ?, ?, ?)', [id, to, reason ?? null, t])
      return true
    })
  /** A deal that failed or ended: why kept, its transfer token and retrievability gone. */
  const finish = (id: number, to: 'failed' | 'ended', f: CopyFailure) =>
    transition(id, to, 'reason_code = ?, reason = ?, token_hash = NULL, retrievable = 0, ', [f.code, f.detail ?? null], failureText(f))

  return {
    markProposed: (id, taken) =>
      transition(id, 'proposed', 'proposal_id = COALESCE(?, proposal_id), add_tx_hash = COALESCE(?, add_tx_hash), ', [
        taken.proposalId ?? null,
        taken.addTxHash ?? null,
      ]),
    markPublished: (id, onChain) =>
      transition(
        id,
        'published',
        'deal_id = COALESCE(?, deal_id), data_set_id = COALESCE(?, data_set_id), token_hash = NULL, ',
        [onChain.dealId ?? null, onChain.dataSetId ?? null],
        onChain.dealId !== undefined ? `deal ${onChain.dealId}` : `data set ${onChain.dataSetId}`,
      ),
    markActive: (id) => transition(id, 'active', '', []),
    markFailed: (id, failure) => finish(id, 'failed', failure),
    markEnded: (id, failure) => finish(id, 'ended', failure),
    async recordAddTx(id, txHash) {
      await sql.run('UPDATE group_deals SET add_tx_hash = ?, updated_ms = ? WHERE id = ?', [txHash, now(), id])
    },
    async recordPdpCopy(id, copy) {
      await sql.run(
        'UPDATE group_deals SET data_set_id = ?, piece_id = ?, added_epoch = ?, retrieval_url = ?, updated_ms = ? WHERE id = ?',
        [copy.dataSetId, copy.pieceId, copy.addedEpoch, copy.retrievalUrl, now(), id],
      )
    },
    async recordProof(id, proof) {
      await sql.run(
        `UPDATE group_deals SET last_proof_epoch = COALESCE(?, last_proof_epoch), first_proof_due_epoch = ?, missed_proof_epoch = ?,
           stops_counting_epoch = ?, end_epoch = ?, updated_ms = ? WHERE id = ?`,
        [
          proof.lastProofEpoch ?? null,
          proof.firstProofDueEpoch ?? null,
          proof.missed?.missedProofEpoch ?? null,
          proof.missed?.stopsCountingEpoch ?? null,
          proof.endEpoch,
          now(),
          id,
        ],
      )
    },
    async recordCheck(id, result, rule = { inARow: 1, window: 1, failedInWindow: 1 }) {
      const t = now()
      // Nothing could be reached: not retrievable now, but no one is blamed: it counts as before.
      if (result === 'unsure') {
        await sql.run('UPDATE group_deals SET retrievable = 0, checked_ms = ?, updated_ms = ? WHERE id = ?', [t, t, id])
        return undefined
      }
      // Read, then written: one process checks a copy at a time (the deal engine's tick runs exclusively).
      const row = await sql.get<{ failed_checks: number; recent_checks: string; check_failed_ms: number | null }>(
        'SELECT failed_checks, recent_checks, check_failed_ms FROM group_deals WHERE id = ?',
        [id],
      )
      if (!row) return undefined
      const passed = result === 'passed'
      const recent = (row.recent_checks + (passed ? 'p' : 'f')).slice(-rule.window)
      const failedInWindow = recent.split('f').length - 1
      const byWindow = recent.length >= rule.window && failedInWindow >= rule.failedInWindow
      const inARow = passed ? 0 : row.failed_checks + 1
      const stopped = passed
        ? byWindow
          ? row.check_failed_ms
          : null
        : (row.check_failed_ms ?? (inARow >= rule.inARow || byWindow ? t : null))
      await sql.run(
        `UPDATE group_deals SET retrievable = ?, failed_checks = ?, recent_checks = ?, check_failed_ms = ?, checked_ms = ?, updated_ms = ?
           WHERE id = ?`,
        [passed ? 1 : 0, inARow, recent, stopped, t, t, id],
      )
      return { inARow, failedInWindow, checks: recent.length, stoppedNow: row.check_failed_ms === null && stopped !== null }
    },
    async failInterrupted() {
      let n = 0
      // PDP copies are not: their route looks on chain for what their adds did (pdp/adopt.ts).
      for (const { id } of await sql.all<{ id: number }>(`SELECT id FROM group_deals WHERE state = 'proposing' AND route <> 'pdp'`)) {
        if (await finish(id, 'failed', { code: 'INTERRUPTED' })) n++
      }
      return n
    },
  }
}

import { migrateSql, type Sql, type Step } from '../../shared/sql/index.ts'

/** The failure codes as they were when reasons got their own column (a migration never changes). */
const CODES = [
  'PROVIDER_REFUSED',
  'PROVIDER_UNREACHABLE',
  'PROVIDER_PROTOCOL_ERROR',
  'PROPOSAL_TIMEOUT',
  'PROPOSAL_UNANSWERED',
  'PROPOSAL_LOST',
  'PROPOSAL_EXPIRED',
  'NOT_ON_CHAIN',
  'CHAIN_DEAL_MISMATCH',
  'NOT_SEALED_IN_TIME',
  'SLASHED',
  'EXPIRED',
  'INTERRUPTED',
  'UPLOAD_STALLED',
  'NEVER_PROVED',
  'MISSED_PROOFS',
  'PIECE_REMOVED',
  'DATA_SET_TERMINATED',
]
  .map((c) => `'${c}'`)
  .join(', ')

const PER_COLUMN = `ALTER TABLE group_deals ADD COLUMN add_tx_hash TEXT;
   ALTER TABLE group_deals ADD COLUMN reason_code TEXT;
   UPDATE group_deals SET add_tx_hash = proposal_id WHERE route = 'pdp' AND proposal_id LIKE '0x%';
   UPDATE group_deals SET data_set_id = deal_id WHERE route = 'pdp' AND data_set_id IS NULL;
   UPDATE group_deals SET proposal_id = NULL, deal_id = NULL WHERE route = 'pdp';`

export const DEAL_STEPS: Step[] = [
  `CREATE TABLE group_deals (
     id INTEGER PRIMARY KEY,
     group_id INTEGER NOT NULL,
     provider TEXT NOT NULL,
     piece_cid TEXT NOT NULL,
     state TEXT NOT NULL,
     proposal_id TEXT,
     deal_id INTEGER,
     start_epoch INTEGER NOT NULL,
     end_epoch INTEGER NOT NULL,
     token_hash TEXT,
     reason TEXT,
     retrievable INTEGER NOT NULL DEFAULT 0,
     checked_ms INTEGER,
     created_ms INTEGER NOT NULL,
     updated_ms INTEGER NOT NULL
   );
   CREATE INDEX group_deals_group ON group_deals (group_id);
   CREATE INDEX group_deals_state ON group_deals (state);`,
  // The audit trail: what was signed and sent, what the provider answered, every state change.
  // Events are read in insertion order (SQLite's rowid); PostgreSQL gets a column of that name.
  {
    sqlite: `ALTER TABLE group_deals ADD COLUMN proposal_epoch INTEGER;
   ALTER TABLE group_deals ADD COLUMN signed_proposal BLOB;
   ALTER TABLE group_deals ADD COLUMN proposal_cid TEXT;
   ALTER TABLE group_deals ADD COLUMN provider_answer TEXT;
   CREATE TABLE group_deal_events (
     deal_id INTEGER NOT NULL,
     state TEXT NOT NULL,
     reason TEXT,
     at_ms INTEGER NOT NULL
   );
   CREATE INDEX group_deal_events_deal ON group_deal_events (deal_id);`,
    postgres: `ALTER TABLE group_deals ADD COLUMN proposal_epoch INTEGER;
   ALTER TABLE group_deals ADD COLUMN signed_proposal BLOB;
   ALTER TABLE group_deals ADD COLUMN proposal_cid TEXT;
   ALTER TABLE group_deals ADD COLUMN provider_answer TEXT;
   CREATE TABLE group_deal_events (
     rowid INTEGER GENERATED ALWAYS AS IDENTITY,
     deal_id INTEGER NOT NULL,
     state TEXT NOT NULL,
     reason TEXT,
     at_ms INTEGER NOT NULL
   );
   CREATE INDEX group_deal_events_deal ON group_deal_events (deal_id);`,
  },
  // What the provider downloads (CAR then zeros up to the proposal's piece size); NULL on older deals: the CAR alone.
  `ALTER TABLE group_deals ADD COLUMN transfer_size INTEGER;`,
  // The storage route a copy took: the deal market, or a PDP copy on the Onchain Cloud (its data set, piece,
  // the epoch it was added, where it is served, its last proof). Older rows are deal-market deals.
  `ALTER TABLE group_deals ADD COLUMN route TEXT NOT NULL DEFAULT 'market';
   ALTER TABLE group_deals ADD COLUMN data_set_id INTEGER;
   ALTER TABLE group_deals ADD COLUMN piece_id INTEGER;
   ALTER TABLE group_deals ADD COLUMN added_epoch INTEGER;
   ALTER TABLE group_deals ADD COLUMN retrieval_url TEXT;
   ALTER TABLE group_deals ADD COLUMN last_proof_epoch INTEGER;`,
  // Each column means one thing: a PDP copy's add transaction and data set get their own columns (they were
  // kept in proposal_id and deal_id), and a failure's code is kept apart from its detail (the provider's words,
  // what the chain showed), which `reason` now holds. Older reasons were "CODE", "CODE: detail" or a
  // provider's own words: a refusal of the proposal (never accepted) or a failure it reported later.
  {
    sqlite: `${PER_COLUMN}
   UPDATE group_deals SET reason_code = CASE
       WHEN reason IN (${CODES}) THEN reason
       WHEN instr(reason, ': ') > 0 AND substr(reason, 1, instr(reason, ': ') - 1) IN (${CODES}) THEN substr(reason, 1, instr(reason, ': ') - 1)
       WHEN proposal_id IS NULL THEN 'PROVIDER_DECLINED'
       ELSE 'PROVIDER_FAILED' END,
     reason = CASE
       WHEN reason IN (${CODES}) THEN NULL
       WHEN instr(reason, ': ') > 0 AND substr(reason, 1, instr(reason, ': ') - 1) IN (${CODES}) THEN substr(reason, instr(reason, ': ') + 2)
       ELSE reason END
     WHERE reason IS NOT NULL;`,
    postgres: `${PER_COLUMN}
   UPDATE group_deals SET reason_code = CASE
       WHEN reason IN (${CODES}) THEN reason
       WHEN strpos(reason, ': ') > 0 AND split_part(reason, ': ', 1) IN (${CODES}) THEN split_part(reason, ': ', 1)
       WHEN proposal_id IS NULL THEN 'PROVIDER_DECLINED'
       ELSE 'PROVIDER_FAILED' END,
     reason = CASE
       WHEN reason IN (${CODES}) THEN NULL
       WHEN strpos(reason, ': ') > 0 AND split_part(reason, ': ', 1) IN (${CODES}) THEN substr(reason, strpos(reason, ': ') + 2)
       ELSE reason END
     WHERE reason IS NOT NULL;`,
  },
  // When a committed PDP copy's first proof is due (the challenge window's opening epoch), as the chain's proving
  // schedule says; NULL once proved, and on rows from before it was read.
  `ALTER TABLE group_deals ADD COLUMN first_proof_due_epoch INTEGER;`,
  // A copy stops counting on evidence, not on one failed retrieval check: the checks it failed in a row (rounds in
  // which nothing could be reached blame no one), and when they were enough for it to stop counting. A copy that had
  // stopped counting on one failure keeps that verdict.
  `ALTER TABLE group_deals ADD COLUMN failed_checks INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE group_deals ADD COLUMN check_failed_ms INTEGER;
   UPDATE group_deals SET failed_checks = 1, check_failed_ms = checked_ms WHERE retrievable = 0 AND checked_ms IS NOT NULL;`,
  // And over a window: a copy's last checks that passed ('p') or were blamed on its provider ('f'), newest last, so
  // that a provider answering only some of the time stops counting too (check.ts). Older rows start with none.
  `ALTER TABLE group_deals ADD COLUMN recent_checks TEXT NOT NULL DEFAULT '';`,
  // A proved PDP copy that misses its proofs, as the chain's proving schedule says: the deadline of the first period
  // it missed in a row, and the epoch after which it stops counting. Kept so that the record shows the miss and a
  // restart keeps its count; NULL while it proves, and on rows from before it was kept (read again at the next poll).
  `ALTER TABLE group_deals ADD COLUMN missed_proof_epoch INTEGER;
   ALTER TABLE group_deals ADD COLUMN stops_counting_epoch INTEGER;`,
  // The storage prices the warm storage service published (USDFC, 18 decimals, as decimal text), a row each time
  // they are seen to change: what `npm run deals -- usage` prices the PDP copies at without asking the chain.
  `CREATE TABLE pdp_rates (
     storage_per_tib_per_month TEXT NOT NULL,
     dataset_fee_per_month TEXT NOT NULL,
     seen_ms INTEGER NOT NULL
   );`,
]

/** Creates or upgrades the deal engine's tables (in the gateway's store, beside the content store's). */
export async function migrateDeals(sql: Sql): Promise<void> {
  await migrateSql(sql, 'gateway.deals', DEAL_STEPS)
}

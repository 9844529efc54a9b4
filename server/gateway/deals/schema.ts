import { migrateSql, type Sql, type Step } from '../../shared/sql/index.ts'

const STEPS: Step[] = [
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
]

/** Creates or upgrades the deal engine's tables (in the gateway's store, beside the content store's). */
export async function migrateDeals(sql: Sql): Promise<void> {
  await migrateSql(sql, 'gateway.deals', STEPS)
}

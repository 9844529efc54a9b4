import { migrateSql, type Sql } from '../shared/sql/index.ts'

/** The deal service's tables, in SQLite's DDL (ddlFor writes PostgreSQL's). Append-only steps (see shared/sql/migrate.ts). */
export const SERVICE_STEPS = [
  `
  CREATE TABLE tenants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL CHECK (plan IN ('clients-free', 'clients-premium', 'providers-free')),
    created_at INTEGER NOT NULL
  );
  -- Keys are random 192-bit tokens, so a plain SHA-256 is a safe lookup key.
  CREATE TABLE api_keys (
    key_hash TEXT PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    label TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
  );
  CREATE TABLE client_addresses (
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    address TEXT NOT NULL,
    PRIMARY KEY (tenant_id, address)
  );
  CREATE TABLE blacklist (
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    provider TEXT NOT NULL,
    PRIMARY KEY (tenant_id, provider)
  );
  CREATE TABLE policies (
    tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
    priority TEXT NOT NULL,
    mix_copies INTEGER NOT NULL
  );
  CREATE TABLE policy_groups (
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    position INTEGER NOT NULL,
    number_of_copies INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, name)
  );
  CREATE TABLE policy_providers (
    tenant_id INTEGER NOT NULL,
    group_name TEXT NOT NULL,
    address_id TEXT NOT NULL,
    comment TEXT NOT NULL DEFAULT '',
    position INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, address_id),
    FOREIGN KEY (tenant_id, group_name) REFERENCES policy_groups(tenant_id, name) ON DELETE CASCADE
  );
  -- One row per deal of a tenant's clients, as last seen on chain.
  -- last_update_ms is integer milliseconds so that (last_update_ms, deal_id) is an exact keyset.
  CREATE TABLE deals (
    tenant_id INTEGER NOT NULL,
    deal_id INTEGER NOT NULL,
    last_update_ms INTEGER NOT NULL,
    piece_cid TEXT NOT NULL,
    provider TEXT NOT NULL,
    status TEXT NOT NULL,
    published_epoch INTEGER NOT NULL,
    start_epoch INTEGER NOT NULL,
    end_epoch INTEGER NOT NULL,
    proposal TEXT NOT NULL,
    PRIMARY KEY (tenant_id, deal_id)
  ) WITHOUT ROWID;
  CREATE INDEX deals_by_update ON deals (tenant_id, last_update_ms, deal_id);
  CREATE INDEX deals_by_piece ON deals (tenant_id, piece_cid);
  `,
  // Each deal keeps its page entry as get-on-chain-deals sends it, and the table gets an
  // integer row key: a 10 000-deal page is then one index walk and one string per deal,
  // in either sort order (a WITHOUT ROWID table made every lastUpdate row a composite-key lookup).
  `
  CREATE TABLE deals_by_row (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id INTEGER NOT NULL,
    deal_id INTEGER NOT NULL,
    last_update_ms INTEGER NOT NULL,
    piece_cid TEXT NOT NULL,
    provider TEXT NOT NULL,
    status TEXT NOT NULL,
    published_epoch INTEGER NOT NULL,
    start_epoch INTEGER NOT NULL,
    end_epoch INTEGER NOT NULL,
    -- "<dealId>":{"lastUpdate":…,"proposal":…,"state":{…}}, lastUpdate in seconds as JS prints ms / 1000.
    page_entry TEXT NOT NULL
  );
  INSERT INTO deals_by_row (tenant_id, deal_id, last_update_ms, piece_cid, provider, status, published_epoch, start_epoch, end_epoch, page_entry)
    SELECT tenant_id, deal_id, last_update_ms, piece_cid, provider, status, published_epoch, start_epoch, end_epoch,
      '"' || deal_id || '":{"lastUpdate":' || (last_update_ms / 1000)
      || CASE WHEN last_update_ms % 1000 = 0 THEN '' ELSE '.' || rtrim(substr(CAST(1000 + last_update_ms % 1000 AS TEXT), 2), '0') END
      || ',"proposal":' || proposal || ',"state":{"status":"' || status || '","publishedEpoch":' || published_epoch
      || ',"onChainStartEpoch":' || start_epoch || ',"onChainEndEpoch":' || end_epoch || '}}'
    FROM deals ORDER BY tenant_id, deal_id;
  DROP TABLE deals;
  ALTER TABLE deals_by_row RENAME TO deals;
  CREATE UNIQUE INDEX deals_key ON deals (tenant_id, deal_id);
  CREATE INDEX deals_by_update ON deals (tenant_id, last_update_ms, deal_id);
  CREATE INDEX deals_by_piece ON deals (tenant_id, piece_cid);
  `,
  // Where the walk over market deal ids (deal-sync.ts) goes on from: new deals are found by id, not listed.
  `
  CREATE TABLE deal_scan (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    next_deal_id INTEGER NOT NULL
  );
  `,
]

export async function migrateService(sql: Sql): Promise<void> {
  await migrateSql(sql, 'service', SERVICE_STEPS)
}

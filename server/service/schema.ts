import { migrateSql, type Sql } from '../shared/sql/index.ts'

/** The deal service's tables, in SQLite's DDL (ddlFor writes PostgreSQL's). Append-only steps (see shared/sql/migrate.ts). */
const STEPS = [
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
]

export async function migrateService(sql: Sql): Promise<void> {
  await migrateSql(sql, 'service', STEPS)
}

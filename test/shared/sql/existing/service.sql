-- `sqlite3 .dump` of a service database made by commit 8b52774, the code before one migration runner
-- served every store (see migrate.test.ts). Never edit: it stands for files already out there.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_versions (module TEXT PRIMARY KEY, version INTEGER NOT NULL);
INSERT INTO schema_versions VALUES('service',3);
CREATE TABLE tenants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL CHECK (plan IN ('clients-free', 'clients-premium', 'providers-free')),
    created_at INTEGER NOT NULL
  );
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
CREATE TABLE IF NOT EXISTS "deals" (
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
CREATE TABLE deal_scan (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    next_deal_id INTEGER NOT NULL
  );
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('deals',0);
CREATE UNIQUE INDEX deals_key ON deals (tenant_id, deal_id);
CREATE INDEX deals_by_update ON deals (tenant_id, last_update_ms, deal_id);
CREATE INDEX deals_by_piece ON deals (tenant_id, piece_cid);
COMMIT;

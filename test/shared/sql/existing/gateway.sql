-- `sqlite3 .dump` of a gateway database made by commit 8b52774, the code before one migration runner
-- served every store (see migrate.test.ts). Never edit: it stands for files already out there.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_versions (module TEXT PRIMARY KEY, version INTEGER NOT NULL);
INSERT INTO schema_versions VALUES('gateway.namespace',3);
INSERT INTO schema_versions VALUES('gateway.deals',3);
INSERT INTO schema_versions VALUES('gateway.content',1);
INSERT INTO schema_versions VALUES('gateway.webdav',1);
CREATE TABLE entries (
     path TEXT PRIMARY KEY,
     parent TEXT,
     kind TEXT NOT NULL CHECK (kind IN ('file', 'dir')),
     cid TEXT,
     size INTEGER NOT NULL DEFAULT 0,
     dag_size INTEGER NOT NULL DEFAULT 0,
     content_type TEXT,
     etag TEXT NOT NULL,
     created_ms INTEGER NOT NULL,
     modified_ms INTEGER NOT NULL
   , file_id INTEGER, checksum TEXT, cid_profile TEXT);
INSERT INTO entries VALUES('/',NULL,'dir',NULL,0,0,NULL,'zkIZ5RG6dEYW',1795603367840,1795603367876,1,NULL,'unixfs-v1-2025');
INSERT INTO entries VALUES('/docs','/','dir',NULL,0,0,NULL,'phkiL56uya8j',1795603367876,1795603367876,2,NULL,'unixfs-v1-2025');
CREATE TABLE file_ids (id INTEGER PRIMARY KEY AUTOINCREMENT);
INSERT INTO file_ids VALUES(1);
INSERT INTO file_ids VALUES(2);
CREATE TABLE namespace_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO namespace_meta VALUES('instance_id','oc4fc4de0aca');
CREATE TABLE group_deals (
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
   , proposal_epoch INTEGER, signed_proposal BLOB, proposal_cid TEXT, provider_answer TEXT, transfer_size INTEGER);
CREATE TABLE group_deal_events (
     deal_id INTEGER NOT NULL,
     state TEXT NOT NULL,
     reason TEXT,
     at_ms INTEGER NOT NULL
   );
CREATE TABLE content_groups (
     id INTEGER PRIMARY KEY,
     state TEXT NOT NULL,
     size INTEGER NOT NULL DEFAULT 0,
     car_size INTEGER,
     piece_cid TEXT,
     piece_size INTEGER,
     created_ms INTEGER NOT NULL,
     updated_ms INTEGER NOT NULL
   );
CREATE TABLE content_blocks (
     cid TEXT PRIMARY KEY,
     group_id INTEGER NOT NULL REFERENCES content_groups (id),
     offset INTEGER NOT NULL,
     length INTEGER NOT NULL
   ) WITHOUT ROWID;
CREATE TABLE contents (
     cid TEXT PRIMARY KEY,
     size INTEGER NOT NULL,
     dag_size INTEGER NOT NULL,
     created_ms INTEGER NOT NULL
   ) WITHOUT ROWID;
CREATE TABLE content_leaves (
     content_cid TEXT NOT NULL,
     idx INTEGER NOT NULL,
     file_offset INTEGER NOT NULL,
     length INTEGER NOT NULL,
     block_cid TEXT NOT NULL,
     PRIMARY KEY (content_cid, idx)
   ) WITHOUT ROWID;
CREATE TABLE content_group_links (
     content_cid TEXT NOT NULL,
     group_id INTEGER NOT NULL,
     PRIMARY KEY (content_cid, group_id)
   ) WITHOUT ROWID;
CREATE TABLE webdav_props (
     path TEXT NOT NULL,
     ns TEXT NOT NULL,
     name TEXT NOT NULL,
     element TEXT NOT NULL, -- the property element as JSON (XmlElement)
     PRIMARY KEY (path, ns, name)
   );
CREATE TABLE webdav_locks (
     token TEXT PRIMARY KEY,
     root TEXT NOT NULL,
     depth TEXT NOT NULL CHECK (depth IN ('0', 'infinity')),
     scope TEXT NOT NULL CHECK (scope IN ('exclusive', 'shared')),
     owner TEXT, -- the owner element as JSON (XmlElement), if given
     timeout_s INTEGER NOT NULL,
     expires_ms INTEGER NOT NULL
   );
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('file_ids',2);
CREATE INDEX entries_parent ON entries (parent);
CREATE INDEX entries_cid ON entries (cid);
CREATE UNIQUE INDEX entries_file_id ON entries (file_id);
CREATE INDEX group_deals_group ON group_deals (group_id);
CREATE INDEX group_deals_state ON group_deals (state);
CREATE INDEX group_deal_events_deal ON group_deal_events (deal_id);
CREATE INDEX content_groups_state ON content_groups (state);
CREATE INDEX content_blocks_group ON content_blocks (group_id, offset);
CREATE INDEX content_group_links_group ON content_group_links (group_id);
CREATE INDEX webdav_locks_root ON webdav_locks (root);
COMMIT;

import { migrateSql, type Sql, type Step } from '../../shared/sql/index.ts'

// As shipped for SQLite. `offset` is a reserved word in PostgreSQL: quoted there (and in every query, which SQLite accepts too).
const CONTENT_V1 = `CREATE TABLE content_groups (
     id INTEGER PRIMARY KEY,
     state TEXT NOT NULL,
     size INTEGER NOT NULL DEFAULT 0,
     car_size INTEGER,
     piece_cid TEXT,
     piece_size INTEGER,
     created_ms INTEGER NOT NULL,
     updated_ms INTEGER NOT NULL
   );
   CREATE INDEX content_groups_state ON content_groups (state);
   CREATE TABLE content_blocks (
     cid TEXT PRIMARY KEY,
     group_id INTEGER NOT NULL REFERENCES content_groups (id),
     offset INTEGER NOT NULL,
     length INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX content_blocks_group ON content_blocks (group_id, offset);
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
   CREATE INDEX content_group_links_group ON content_group_links (group_id);`

/**
 * Whether a group holds any file's bytes, or only folders' directory nodes
 * (listings): a listings-only group is not closed by the idle timer, so that
 * deletes and renames do not each pay for a group of their own
 * (group-closing.ts). Groups from before count as holding files: they close
 * as they always did.
 */
const HOLDS_FILES = 'ALTER TABLE content_groups ADD COLUMN holds_files INTEGER NOT NULL DEFAULT 1;'

const STEPS: Step[] = [
  { sqlite: CONTENT_V1, postgres: CONTENT_V1.replace(/\boffset\b/g, '"offset"') },
  // Delete means delete: when a group was first seen with nothing live in it (no file of the tree, no folder's current
  // listing), and when it was retired for that (retire/). NULL while live, and on groups from before.
  `ALTER TABLE content_groups ADD COLUMN dead_since_ms INTEGER;
   ALTER TABLE content_groups ADD COLUMN retired_ms INTEGER;`,
  HOLDS_FILES,
  // Compaction (deals/compact.ts): since when a live group has been mostly dead bytes, and when its live files
  // began to be written again elsewhere. A block moved out of a group keeps its place in that group's CAR here, so
  // the group can still be reloaded and repaired until it is retired. A content's link to a group holding its
  // bytes written again stays hidden behind the group being compacted until that one is retired, so a file shows
  // the copies it has, not the new group's none. Leaves by block, for the dead bytes of a group.
  `ALTER TABLE content_groups ADD COLUMN sparse_since_ms INTEGER;
   ALTER TABLE content_groups ADD COLUMN compacting_ms INTEGER;
   CREATE TABLE content_blocks_moved (
     cid TEXT NOT NULL,
     group_id INTEGER NOT NULL,
     "offset" INTEGER NOT NULL,
     length INTEGER NOT NULL,
     PRIMARY KEY (cid, group_id)
   );
   CREATE INDEX content_blocks_moved_group ON content_blocks_moved (group_id);
   ALTER TABLE content_group_links ADD COLUMN behind_group_id INTEGER;
   CREATE INDEX content_group_links_behind ON content_group_links (behind_group_id);
   CREATE INDEX content_leaves_block ON content_leaves (block_cid);`,
]

/** Creates or upgrades the content store's tables. */
export async function migrateContent(sql: Sql): Promise<void> {
  await migrateSql(sql, 'gateway.content', STEPS)
}

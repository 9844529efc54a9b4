import { migrateSql, type Sql, type Step } from '../../shared/sql/index.ts'

/** WebDAV state beside the namespace: dead properties and locks. Append-only steps. */
const STEPS: Step[] = [
  {
    sqlite: `CREATE TABLE webdav_props (
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
   CREATE INDEX webdav_locks_root ON webdav_locks (root);`,
    // Paths compared byte-wise, as SQLite does: the range queries rely on it.
    postgres: `CREATE TABLE webdav_props (
     path TEXT COLLATE "C" NOT NULL,
     ns TEXT COLLATE "C" NOT NULL,
     name TEXT COLLATE "C" NOT NULL,
     element TEXT NOT NULL,
     PRIMARY KEY (path, ns, name)
   );
   CREATE TABLE webdav_locks (
     token TEXT PRIMARY KEY,
     root TEXT COLLATE "C" NOT NULL,
     depth TEXT NOT NULL CHECK (depth IN ('0', 'infinity')),
     scope TEXT NOT NULL CHECK (scope IN ('exclusive', 'shared')),
     owner TEXT,
     timeout_s INTEGER NOT NULL,
     expires_ms INTEGER NOT NULL
   );
   CREATE INDEX webdav_locks_root ON webdav_locks (root);`,
  },
]

export async function migrateWebDav(sql: Sql): Promise<void> {
  await migrateSql(sql, 'gateway.webdav', STEPS)
}

// '/' is 0x2F and '0' is 0x30: every path strictly below P sorts in [P + '/', P + '0').
export const belowRange = (path: string): [string, string] => (path === '/' ? ['/', '0'] : [path + '/', path + '0'])

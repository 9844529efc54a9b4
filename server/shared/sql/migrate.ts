import { advisoryLockKey } from './postgres.ts'
import { stepFor, type Step } from './dialect.ts'
import type { Sql } from './types.ts'

/**
 * Applies the steps of `module` not applied yet, in one transaction.
 * Steps are append-only: never edit one that has shipped, add a new one.
 * Replicas starting together take turns (an advisory lock on PostgreSQL).
 */
export async function migrateSql(sql: Sql, module: string, steps: readonly Step[]): Promise<void> {
  await sql.transaction(async (tx) => {
    // One lock for every module: creating schema_versions is racy on PostgreSQL even with IF NOT EXISTS.
    if (tx.dialect === 'postgres') await tx.get('SELECT pg_advisory_xact_lock(?)', [advisoryLockKey('schema_versions')])
    await tx.exec('CREATE TABLE IF NOT EXISTS schema_versions (module TEXT PRIMARY KEY, version INTEGER NOT NULL)')
    const row = await tx.get<{ version: number }>('SELECT version FROM schema_versions WHERE module = ?', [module])
    for (let i = row?.version ?? 0; i < steps.length; i++) {
      await tx.exec(stepFor(tx.dialect, steps[i]))
      await tx.run('INSERT INTO schema_versions (module, version) VALUES (?, ?) ON CONFLICT (module) DO UPDATE SET version = excluded.version', [module, i + 1])
    }
  })
}

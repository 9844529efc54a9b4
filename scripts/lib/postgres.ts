import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { freePort } from './ports.ts'

/**
 * A throw-away PostgreSQL cluster from Debian's `postgresql` package, for the
 * tests (through test/helpers/stores.ts) and the benchmarks: initdb in a temp
 * folder, a free loopback port, trust auth.
 * PostgreSQL refuses to run as root, so under root it runs as `postgres`.
 */
export interface TestPostgres {
  url: string
  /** A fresh database on the cluster (each test file its own). */
  createDatabase(name: string): string
  stop(): void
}

const BIN = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].find((d) =>
  existsSync(join(d, 'initdb')),
)

/** Why PostgreSQL cannot run here, or undefined when it can. */
export const postgresUnavailable: string | undefined = !BIN
  ? 'PostgreSQL is not installed (apt-get install postgresql)'
  : userInfo().uid === 0 && spawnSync('id', ['postgres']).status !== 0
    ? 'running as root without a postgres user'
    : undefined

export async function startPostgres(): Promise<TestPostgres> {
  if (postgresUnavailable) throw new Error(postgresUnavailable)
  const dir = mkdtempSync(join(tmpdir(), 'pg-test-'))
  const asRoot = userInfo().uid === 0
  const owner = asRoot ? Number(execFileSync('id', ['-u', 'postgres']).toString().trim()) : undefined
  if (owner !== undefined) chownSync(dir, owner, Number(execFileSync('id', ['-g', 'postgres']).toString().trim()))
  const run = (cmd: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : join(BIN!, cmd), asRoot ? ['-u', 'postgres', '--', join(BIN!, cmd), ...args] : args, {
      stdio: 'pipe',
    })
  const data = join(dir, 'data')
  const port = await freePort()
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  run('pg_ctl', [
    '-D',
    data,
    '-w',
    '-l',
    join(dir, 'log'),
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
    'start',
  ])
  const url = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`
  return {
    url: url('postgres'),
    createDatabase(name) {
      run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-c', `CREATE DATABASE ${name}`])
      return url(name)
    },
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop'])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

import { startPostgres, type TestPostgres } from '../helpers/postgres.ts'

/** GATEWAY_TEST_STORE=postgres: the gateway's HTTP and WebDAV tests keep its records in PostgreSQL. */
export const ON_POSTGRES = process.env.GATEWAY_TEST_STORE === 'postgres'

let cluster: Promise<TestPostgres> | undefined
let n = 0

/**
 * A fresh PostgreSQL database for one gateway under GATEWAY_TEST_STORE=postgres
 * (one throw-away cluster per test file, stopped when it exits), else
 * undefined: the gateway's SQLite file, as by default.
 */
export async function gatewayTestDatabase(): Promise<string | undefined> {
  if (!ON_POSTGRES) return undefined
  if (!cluster) {
    cluster = startPostgres()
    const started = await cluster
    process.once('exit', () => started.stop())
  }
  return (await cluster).createDatabase(`gateway_test_${process.pid}_${++n}`)
}

import type { Sql } from '../shared/sql/index.ts'
import { randomSecret, sha256Hex } from '../shared/secrets.ts'

export type Plan = 'clients-free' | 'clients-premium' | 'providers-free'
export const PLANS: readonly Plan[] = ['clients-free', 'clients-premium', 'providers-free']
export const PLAN_LABELS: Record<Plan, string> = {
  'clients-free': 'Clients (free plan)',
  'clients-premium': 'Clients (premium plan)',
  'providers-free': 'Providers (free plan)',
}

export interface Tenant {
  id: number
  name: string
  plan: Plan
  clientAddresses: string[]
}

export interface TenantStore {
  create(name: string, plan: Plan): Promise<Tenant>
  /** The tenant of that name, created with `plan` if there is none (replicas starting together make one). */
  ensure(name: string, plan: Plan): Promise<Tenant>
  get(id: number): Promise<Tenant | undefined>
  byName(name: string): Promise<Tenant | undefined>
  list(): Promise<Tenant[]>
  setPlan(id: number, plan: Plan): Promise<void>
  addClientAddress(id: number, address: string): Promise<void>
  removeClientAddress(id: number, address: string): Promise<void>
  /**
   * Creates a key and returns it; only its hash is stored, so this is the one time it is seen.
   * A given key that exists already is left to the tenant it belongs to.
   */
  createKey(id: number, label?: string, key?: string): Promise<string>
  revokeKeys(id: number): Promise<number>
  /** The tenant a key belongs to, by hash lookup (no timing leak on the key itself). */
  byKey(key: string): Promise<Tenant | undefined>
  blacklist(id: number): Promise<string[]>
  addToBlacklist(id: number, provider: string): Promise<void>
  removeFromBlacklist(id: number, provider: string): Promise<void>
}

/** Prefix that makes a leaked key recognisable in logs and scanners. */
const KEY_PREFIX = 'fgs_'

type Row = { id: number; name: string; plan: Plan }

export function createTenantStore(sql: Sql): TenantStore {
  const hydrate = async (row: Row | undefined): Promise<Tenant | undefined> => {
    if (!row) return undefined
    const addresses = await sql.all<{ address: string }>('SELECT address FROM client_addresses WHERE tenant_id = ? ORDER BY address', [
      row.id,
    ])
    return { id: row.id, name: row.name, plan: row.plan, clientAddresses: addresses.map((r) => r.address) }
  }
  const byName = async (name: string) => hydrate(await sql.get<Row>('SELECT id, name, plan FROM tenants WHERE name = ?', [name]))

  return {
    async create(name, plan) {
      const row = await sql.get<Row>('INSERT INTO tenants (name, plan, created_at) VALUES (?, ?, ?) RETURNING id, name, plan', [
        name,
        plan,
        Date.now(),
      ])
      return (await hydrate(row))!
    },
    async ensure(name, plan) {
      // On PostgreSQL a concurrent insert of the same name waits for the other to commit, then does nothing.
      await sql.run('INSERT INTO tenants (name, plan, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING', [name, plan, Date.now()])
      return (await byName(name))!
    },
    get: async (id) => hydrate(await sql.get<Row>('SELECT id, name, plan FROM tenants WHERE id = ?', [id])),
    byName,
    async list() {
      const rows = await sql.all<Row>('SELECT id, name, plan FROM tenants ORDER BY id')
      return Promise.all(rows.map(async (r) => (await hydrate(r))!))
    },
    async setPlan(id, plan) {
      await sql.run('UPDATE tenants SET plan = ? WHERE id = ?', [plan, id])
    },
    async addClientAddress(id, address) {
      await sql.run('INSERT INTO client_addresses (tenant_id, address) VALUES (?, ?) ON CONFLICT (tenant_id, address) DO NOTHING', [
        id,
        address,
      ])
    },
    async removeClientAddress(id, address) {
      await sql.run('DELETE FROM client_addresses WHERE tenant_id = ? AND address = ?', [id, address])
    },
    async createKey(id, label = '', key = KEY_PREFIX + randomSecret(24)) {
      await sql.run('INSERT INTO api_keys (key_hash, tenant_id, label, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (key_hash) DO NOTHING', [
        sha256Hex(key),
        id,
        label,
        Date.now(),
      ])
      return key
    },
    revokeKeys: async (id) => (await sql.run('DELETE FROM api_keys WHERE tenant_id = ?', [id])).changes,
    byKey: async (key) =>
      hydrate(
        await sql.get<Row>('SELECT t.id, t.name, t.plan FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = ?', [
          sha256Hex(key),
        ]),
      ),
    blacklist: async (id) =>
      (await sql.all<{ provider: string }>('SELECT provider FROM blacklist WHERE tenant_id = ? ORDER BY provider', [id])).map(
        (r) => r.provider,
      ),
    async addToBlacklist(id, provider) {
      await sql.run('INSERT INTO blacklist (tenant_id, provider) VALUES (?, ?) ON CONFLICT (tenant_id, provider) DO NOTHING', [
        id,
        provider,
      ])
    },
    async removeFromBlacklist(id, provider) {
      await sql.run('DELETE FROM blacklist WHERE tenant_id = ? AND provider = ?', [id, provider])
    },
  }
}

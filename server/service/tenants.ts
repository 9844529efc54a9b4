import type { Db } from '../shared/db.ts'
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
  create(name: string, plan: Plan): Tenant
  get(id: number): Tenant | undefined
  byName(name: string): Tenant | undefined
  list(): Tenant[]
  setPlan(id: number, plan: Plan): void
  addClientAddress(id: number, address: string): void
  removeClientAddress(id: number, address: string): void
  /** Creates a key and returns it; only its hash is stored, so this is the one time it is seen. */
  createKey(id: number, label?: string, key?: string): string
  revokeKeys(id: number): number
  /** The tenant a key belongs to, by hash lookup (no timing leak on the key itself). */
  byKey(key: string): Tenant | undefined
  blacklist(id: number): string[]
  addToBlacklist(id: number, provider: string): void
  removeFromBlacklist(id: number, provider: string): void
}

/** Prefix that makes a leaked key recognisable in logs and scanners. */
const KEY_PREFIX = 'fgs_'

export function createTenantStore(db: Db): TenantStore {
  const q = {
    insert: db.prepare('INSERT INTO tenants (name, plan, created_at) VALUES (?, ?, ?)'),
    get: db.prepare('SELECT id, name, plan FROM tenants WHERE id = ?'),
    byName: db.prepare('SELECT id, name, plan FROM tenants WHERE name = ?'),
    list: db.prepare('SELECT id, name, plan FROM tenants ORDER BY id'),
    setPlan: db.prepare('UPDATE tenants SET plan = ? WHERE id = ?'),
    addresses: db.prepare('SELECT address FROM client_addresses WHERE tenant_id = ? ORDER BY address'),
    addAddress: db.prepare('INSERT OR IGNORE INTO client_addresses (tenant_id, address) VALUES (?, ?)'),
    removeAddress: db.prepare('DELETE FROM client_addresses WHERE tenant_id = ? AND address = ?'),
    insertKey: db.prepare('INSERT INTO api_keys (key_hash, tenant_id, label, created_at) VALUES (?, ?, ?, ?)'),
    revokeKeys: db.prepare('DELETE FROM api_keys WHERE tenant_id = ?'),
    byKey: db.prepare('SELECT t.id, t.name, t.plan FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = ?'),
    blacklist: db.prepare('SELECT provider FROM blacklist WHERE tenant_id = ? ORDER BY provider'),
    addBlack: db.prepare('INSERT OR IGNORE INTO blacklist (tenant_id, provider) VALUES (?, ?)'),
    removeBlack: db.prepare('DELETE FROM blacklist WHERE tenant_id = ? AND provider = ?'),
  }
  type Row = { id: number; name: string; plan: Plan }
  const hydrate = (row: Row | undefined): Tenant | undefined =>
    row && { ...row, clientAddresses: (q.addresses.all(row.id) as { address: string }[]).map((r) => r.address) }

  return {
    create(name, plan) {
      const info = q.insert.run(name, plan, Date.now())
      return hydrate(q.get.get(info.lastInsertRowid) as Row)!
    },
    get: (id) => hydrate(q.get.get(id) as Row | undefined),
    byName: (name) => hydrate(q.byName.get(name) as Row | undefined),
    list: () => (q.list.all() as Row[]).map((r) => hydrate(r)!),
    setPlan(id, plan) {
      q.setPlan.run(plan, id)
    },
    addClientAddress(id, address) {
      q.addAddress.run(id, address)
    },
    removeClientAddress(id, address) {
      q.removeAddress.run(id, address)
    },
    createKey(id, label = '', key = KEY_PREFIX + randomSecret(24)) {
      q.insertKey.run(sha256Hex(key), id, label, Date.now())
      return key
    },
    revokeKeys: (id) => q.revokeKeys.run(id).changes,
    byKey: (key) => hydrate(q.byKey.get(sha256Hex(key)) as Row | undefined),
    blacklist: (id) => (q.blacklist.all(id) as { provider: string }[]).map((r) => r.provider),
    addToBlacklist(id, provider) {
      q.addBlack.run(id, provider)
    },
    removeFromBlacklist(id, provider) {
      q.removeBlack.run(id, provider)
    },
  }
}

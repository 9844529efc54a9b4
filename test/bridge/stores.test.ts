/**
 * The bridge's state (embedded users, sessions, gateway link settings) on
 * both stores, and what bridge replicas sharing one store must see: the
 * login throttle's suite is in throttle.test.ts.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createSessionStore } from '../../server/bridge/sessions.ts'
import { createSettingsStore } from '../../server/bridge/settings-store.ts'
import { createUserStore, UserStoreError } from '../../server/bridge/users.ts'
import type { BridgeConfig } from '../../server/shared/config.ts'
import type { Sql } from '../../server/shared/sql/index.ts'
import { describeEachStore } from '../helpers/stores.ts'

const config: BridgeConfig = {
  host: '127.0.0.1',
  port: 0,
  dataDir: '/nonexistent',
  network: 'simnet',
  simnetGenesis: 1704067200,
  gatewayUrl: 'http://127.0.0.1:9011',
  gatewayUser: 'svc',
  gatewayPassword: 'svc-secret',
  gatewayTimeoutMs: 1000,
  pathMap: '/{user}',
  ipfsGateway: 'https://ipfs.io',
}

describeEachStore('bridge state', ({ open }) => {
  let sql: Sql
  beforeEach(async () => {
    sql = await open('bridge')
  })
  afterEach(() => sql.close())

  it('keeps users with hashed passwords and app passwords, and refuses a second user of the same id', async () => {
    const users = await createUserStore(sql)
    const alice = await users.add({ id: 'alice', password: 'alice-password', displayName: 'Alice' })
    expect(alice).toMatchObject({ id: 'alice', displayName: 'Alice', isAdmin: false })
    expect(await users.verify('alice', 'alice-password')).toMatchObject({ id: 'alice' })
    expect(await users.verify('alice', 'wrong-password')).toBeUndefined()
    expect(await users.verify('nobody', 'alice-password')).toBeUndefined()
    const stored = await sql.get<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = ?', ['alice'])
    expect(stored!.password_hash).not.toContain('alice-password')

    const { token, info } = await users.createAppPassword('alice', 'phone')
    expect(await users.verify('alice', token)).toMatchObject({ id: 'alice' })
    expect(await users.listAppPasswords('alice')).toEqual([info])
    expect(await users.revokeAppPasswords('alice', info.id)).toBe(1)
    expect(await users.verify('alice', token)).toBeUndefined()

    // Two replicas adding the same user at once: one wins, the other is told.
    const other = await createUserStore(sql)
    const both = await Promise.allSettled([
      users.add({ id: 'bob', password: 'bob-password-1' }),
      other.add({ id: 'bob', password: 'bob-password-2' }),
    ])
    expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const refused = both.find((r) => r.status === 'rejected') as PromiseRejectedResult
    expect(refused.reason).toBeInstanceOf(UserStoreError)
    expect(refused.reason.code).toBe('USER_EXISTS')
    expect(await users.count()).toBe(2)

    await users.remove('alice')
    expect(await other.get('alice')).toBeUndefined()
  })

  it('serves a session made on one replica to another, until it expires or is destroyed', async () => {
    const users = await createUserStore(sql)
    await users.add({ id: 'alice', password: 'alice-password' })
    const one = await createSessionStore(sql, { ttlMs: 60_000 })
    const two = await createSessionStore(sql, { ttlMs: 60_000 })
    const { id, session } = await one.create('alice', 1_000)
    expect(await two.get(id, 2_000)).toEqual(session)
    expect(await two.get(id, 61_000)).toBeUndefined()
    // Only the id's hash is stored.
    expect(JSON.stringify(await sql.all('SELECT * FROM sessions'))).not.toContain(id)
    await two.destroy(id)
    expect(await one.get(id, 2_000)).toBeUndefined()
  })

  it("has an admin's saved link in force on every replica after its next refresh, never rolled back by a stale read", async () => {
    const one = await createSettingsStore(sql, config)
    const two = await createSettingsStore(sql, config)
    expect(two.get().gatewayUrl).toBe('')
    expect(two.effective().url).toBe('http://127.0.0.1:9011')

    await one.save({ ...one.get(), gatewayUrl: 'https://gateway.example', gatewayUser: 'other', pathMap: '/files/{user}' })
    expect(two.effective().url).toBe('http://127.0.0.1:9011')
    const before = two.version
    await two.refresh()
    expect(two.version).toBeGreaterThan(before)
    expect(two.effective()).toMatchObject({ url: 'https://gateway.example', user: 'other', pathMap: '/files/{user}' })
    // The configured password never goes to an address typed in the admin page.
    expect(two.effective().password).toBeUndefined()

    await two.save({ ...two.get(), pathMap: '/{user}/files' })
    await one.refresh()
    expect(one.get().pathMap).toBe('/{user}/files')
    // Saves and refreshes racing: the newest revision stays.
    await Promise.all([one.save({ ...one.get(), pathMap: '/newest/{user}' }), one.refresh()])
    await one.refresh()
    expect(one.get().pathMap).toBe('/newest/{user}')

    // A restart reads what was saved.
    expect((await createSettingsStore(sql, config)).get().pathMap).toBe('/newest/{user}')
  })
})

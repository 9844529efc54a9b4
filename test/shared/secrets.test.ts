import { describe, expect, it } from 'vitest'
import { mkdtempSync, statSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hashPassword, verifyPassword, loadOrCreateSecretFile, randomSecret } from '../../server/shared/secrets.ts'

describe('secrets', () => {
  it('hashes passwords with a salt and verifies only the right one', async () => {
    const a = await hashPassword('correct horse')
    const b = await hashPassword('correct horse')
    expect(a).toMatch(/^scrypt\$/)
    expect(a).not.toContain('correct horse')
    expect(a).not.toBe(b)
    expect(await verifyPassword('correct horse', a)).toBe(true)
    expect(await verifyPassword('correct horsE', a)).toBe(false)
    expect(await verifyPassword('correct horse', 'garbage')).toBe(false)
  })

  it('creates a secret file once with mode 0600 and reads it back afterwards', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'secret-')), 'sub', 'admin-password')
    const first = loadOrCreateSecretFile(file, () => randomSecret())
    expect(first.created).toBe(true)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const second = loadOrCreateSecretFile(file, () => 'other')
    expect(second).toEqual({ value: first.value, created: false })
    expect(readFileSync(file, 'utf8').trim()).toBe(first.value)
  })
})

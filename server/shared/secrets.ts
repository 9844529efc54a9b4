import { randomBytes, scrypt, timingSafeEqual, createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs'
import { dirname } from 'node:path'
import { promisify } from 'node:util'

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>

// OWASP's scrypt minimum (N=2^17, r=8, p=1) costs ~130 MiB and ~0.3 s here; 2^15
// keeps a login under 100 ms on this 2-core box while staying memory-hard.
const N = 1 << 15
const R = 8
const P = 1
const KEYLEN = 32
const MAXMEM = 64 * 1024 * 1024

/** Hashes a password as `scrypt$N$r$p$salt$hash` (base64url parts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await scryptAsync(password, salt, KEYLEN, { N, r: R, p: P, maxmem: MAXMEM })
  return ['scrypt', N, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$')
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$')
  if (kind !== 'scrypt' || !salt || !hash) return false
  const expected = Buffer.from(hash, 'base64url')
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAXMEM,
  })
  return timingSafeEqual(expected, actual)
}

/** A random secret that is safe in URLs and headers. */
export function randomSecret(bytes = 24): string {
  return randomBytes(bytes).toString('base64url')
}

/** SHA-256 hex, for high-entropy tokens (app passwords, API keys) and cache keys. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

/**
 * Reads a secret saved in the data dir, or creates it with `make()` and saves
 * it with mode 0600. Returns whether it was created, so the caller can print a
 * new one exactly once.
 */
export function loadOrCreateSecretFile(file: string, make: () => string): { value: string; created: boolean } {
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), created: false }
  mkdirSync(dirname(file), { recursive: true })
  const value = make()
  writeFileSync(file, value + '\n', { mode: 0o600, flag: 'wx' })
  chmodSync(file, 0o600)
  return { value, created: true }
}

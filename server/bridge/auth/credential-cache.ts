import { hash, randomBytes } from 'node:crypto'

/**
 * Remembers recently verified logins so that not every request pays for scrypt.
 * Keys are a SHA-256 of login and secret prefixed with a key that lives only
 * in this process: the secret itself is never stored. (A keyed one-shot hash,
 * not an HMAC object per request: about 5× cheaper on the metadata route, and
 * the keys never leave the process, so no extension attack applies.)
 * Failures are never cached.
 */
export interface CredentialCache<T> {
  get(login: string, secret: string, now?: number): T | undefined
  set(login: string, secret: string, value: T, now?: number): void
  /** Verifies once per key even when many requests with the same login arrive together. */
  getOrVerify(login: string, secret: string, verify: () => Promise<T | undefined>): Promise<T | undefined>
  clear(): void
}

export interface CredentialCacheOptions {
  ttlMs?: number
  maxEntries?: number
}

export function createCredentialCache<T>(opts: CredentialCacheOptions = {}): CredentialCache<T> {
  const ttlMs = opts.ttlMs ?? 60_000
  const maxEntries = opts.maxEntries ?? 10_000
  const processKey = randomBytes(32).toString('base64')
  const entries = new Map<string, { value: T; expires: number }>()
  const inFlight = new Map<string, Promise<T | undefined>>()
  // The login's length makes the split between login and secret unambiguous.
  const keyOf = (login: string, secret: string) => hash('sha256', `${processKey}${login.length}:${login}${secret}`, 'base64url')

  const lookup = (key: string, now: number) => {
    const hit = entries.get(key)
    if (!hit) return undefined
    if (hit.expires <= now) {
      entries.delete(key)
      return undefined
    }
    return hit.value
  }
  const store = (key: string, value: T, now: number) => {
    entries.delete(key)
    entries.set(key, { value, expires: now + ttlMs })
    // Oldest first in a Map: evict from the front.
    for (const k of entries.keys()) {
      if (entries.size <= maxEntries) break
      entries.delete(k)
    }
  }

  return {
    get: (login, secret, now = Date.now()) => lookup(keyOf(login, secret), now),
    set: (login, secret, value, now = Date.now()) => store(keyOf(login, secret), value, now),
    async getOrVerify(login, secret, verify) {
      const key = keyOf(login, secret)
      const hit = lookup(key, Date.now())
      if (hit !== undefined) return hit
      let pending = inFlight.get(key)
      if (!pending) {
        pending = verify()
          .then((value) => {
            if (value !== undefined) store(key, value, Date.now())
            return value
          })
          .finally(() => inFlight.delete(key))
        inFlight.set(key, pending)
      }
      return pending
    },
    clear: () => entries.clear(),
  }
}

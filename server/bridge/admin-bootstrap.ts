import { join } from 'node:path'
import { loadOrCreateSecretFile, randomSecret } from '../shared/secrets.ts'
import { UserStoreError, type UserStore } from './users.ts'

export interface AdminBootstrapOptions {
  dataDir: string
  /** ADMIN_PASSWORD; when unset a random one is generated and saved. */
  adminPassword?: string
  /** Where a generated password is shown, once. */
  print: (line: string) => void
}

/**
 * On first start (no users at all) creates `admin` with admin rights, so the
 * surface is never open and never locked. Returns whether it did.
 */
export async function ensureAdminUser(users: UserStore, opts: AdminBootstrapOptions): Promise<boolean> {
  if ((await users.count()) > 0) return false
  let password = opts.adminPassword
  if (!password) {
    const file = join(opts.dataDir, 'admin-password')
    const secret = loadOrCreateSecretFile(file, () => randomSecret(18))
    password = secret.value
    if (secret.created) opts.print(`Created user "admin" with password ${password} (saved in ${file})`)
  }
  try {
    await users.add({ id: 'admin', password, displayName: 'Administrator', isAdmin: true })
  } catch (err) {
    // Another bridge replica on the same database made it first.
    if (err instanceof UserStoreError && err.code === 'USER_EXISTS') return false
    throw err
  }
  return true
}

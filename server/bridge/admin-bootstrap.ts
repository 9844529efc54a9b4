import { join } from 'node:path'
import { loadOrCreateSecretFile, randomSecret } from '../shared/secrets.ts'
import { UserStoreError, type UserStore } from './users.ts'

/** Where the admin's password of the embedded default comes from, for the start banner and the login page. */
export const FIRST_PASSWORD = 'ADMIN_PASSWORD at the first start, or else in the file app/admin-password of DATA_DIR'

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
 *
 * ADMIN_PASSWORD only applies then: a later start never overwrites a password
 * the admin may have changed since. When it is set and is not `admin`'s
 * password, that is said plainly, with how to change the password.
 */
export async function ensureAdminUser(users: UserStore, opts: AdminBootstrapOptions): Promise<boolean> {
  if ((await users.count()) > 0) {
    if (opts.adminPassword && (await users.get('admin')) && !(await users.verify('admin', opts.adminPassword))) {
      opts.print(
        `ADMIN_PASSWORD is ignored: user "admin" was created at the first start and keeps its password (${FIRST_PASSWORD}). Change it with: npm run users -- passwd admin`,
      )
    }
    return false
  }
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

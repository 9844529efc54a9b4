import { parseArgs } from 'node:util'
import { join } from 'node:path'
import { loadConfig } from '../server/shared/config.ts'
import { parseAddress } from '../server/shared/address.ts'
import { openSql } from '../server/shared/sql/index.ts'
import { migrateService } from '../server/service/schema.ts'
import { createTenantStore, PLANS, PLAN_LABELS, type Plan } from '../server/service/tenants.ts'

const HELP = `Usage: npm run tenants -- <command> [options]

Manages the deal service's tenants in DATA_DIR/service/service.sqlite
(DATA_DIR defaults to ./data), or in schema "service" of DATABASE_URL when it
is set. Changes apply to running services at once.

Commands:
  list                                 tenants with plan and client addresses
  create <name> [--plan PLAN]          create a tenant (default plan clients-free)
                                       and print its first API key (shown once)
  key <name> [--label TEXT]            create another API key (shown once)
  revoke-keys <name>                   revoke all of a tenant's keys
  plan <name> <PLAN>                   change a tenant's plan
  add-client <name> <address>          add a client address (f1…, f3…, f0…)
  remove-client <name> <address>       remove a client address
  blacklist <name> <f0 provider>       never propose this provider to the tenant
  unblacklist <name> <f0 provider>

Plans: ${PLANS.join(', ')}.
Keys are stored as SHA-256 hashes; a lost key cannot be shown again, create a new one.
`

function fail(message: string): never {
  process.stderr.write(`${message}\n`)
  process.exit(1)
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { plan: { type: 'string' }, label: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
})
if (values.help || positionals.length === 0) {
  process.stdout.write(HELP)
  process.exit(values.help ? 0 : 1)
}

const config = loadConfig()
const sql = await openSql({
  databaseUrl: config.service.databaseUrl,
  file: join(config.service.dataDir, 'service.sqlite'),
  schema: 'service',
})
await migrateService(sql)
const tenants = createTenantStore(sql)
const [command, name, arg] = positionals

const asPlan = (p: string | undefined): Plan => {
  if (!p || !PLANS.includes(p as Plan)) fail(`Plan must be one of: ${PLANS.join(', ')}`)
  return p as Plan
}
const tenantNamed = async (n: string | undefined) => {
  if (!n) fail('Give the tenant name')
  return (await tenants.byName(n)) ?? fail(`No tenant named "${n}"`)
}
const validAddress = (a: string | undefined, idOnly = false) => {
  const parsed = a ? parseAddress(a) : undefined
  if (!parsed?.ok) fail(`Not a Filecoin address: ${a ?? '(none)'}${parsed && !parsed.ok ? ` (${parsed.reason})` : ''}`)
  if (idOnly && parsed.address.protocol !== 0) fail('Providers are given by their ID address (f0…)')
  return a!
}

switch (command) {
  case 'list':
    for (const t of await tenants.list()) process.stdout.write(`${t.name}\t${PLAN_LABELS[t.plan]}\t${t.clientAddresses.join(',') || '-'}\n`)
    break
  case 'create': {
    if (!name || !/^[\w.@-]{1,64}$/.test(name)) fail('Tenant names are 1-64 letters, digits, _ . @ -')
    if (await tenants.byName(name)) fail(`Tenant "${name}" exists`)
    const t = await tenants.create(name, asPlan(values.plan ?? 'clients-free'))
    process.stdout.write(
      `Created tenant ${t.name} (${PLAN_LABELS[t.plan]}). API key (shown once):\n${await tenants.createKey(t.id, 'created')}\n`,
    )
    break
  }
  case 'key':
    process.stdout.write(`${await tenants.createKey((await tenantNamed(name)).id, values.label ?? '')}\n`)
    break
  case 'revoke-keys':
    process.stdout.write(`Revoked ${await tenants.revokeKeys((await tenantNamed(name)).id)} key(s)\n`)
    break
  case 'plan':
    await tenants.setPlan((await tenantNamed(name)).id, asPlan(arg))
    process.stdout.write(`${name} is now on ${PLAN_LABELS[asPlan(arg)]}\n`)
    break
  case 'add-client':
    await tenants.addClientAddress((await tenantNamed(name)).id, validAddress(arg))
    break
  case 'remove-client':
    await tenants.removeClientAddress((await tenantNamed(name)).id, validAddress(arg))
    break
  case 'blacklist':
    await tenants.addToBlacklist((await tenantNamed(name)).id, validAddress(arg, true))
    break
  case 'unblacklist':
    await tenants.removeFromBlacklist((await tenantNamed(name)).id, validAddress(arg, true))
    break
  default:
    fail(`Unknown command "${command}"\n\n${HELP}`)
}
await sql.close()

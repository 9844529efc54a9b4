import { z } from 'zod'
import { parseAddressOn, type AddressNetwork } from '../shared/address.ts'
import type { Db } from '../shared/db.ts'
import type { NetworkPort } from '../network/types.ts'
import { badRequest } from './errors.ts'

export const IMPORT_CODES = [
  'PROVIDER_BLACKLISTED',
  'NUMBER_OF_GROUP_LIMIT_EXCEEDED',
  'GROUP_MUST_CONTAINS_AT_LEAST_ONE_PROVIDER',
  'GROUP_NAME_MUST_BE_UNIQUE',
  'PROVIDER_DUPLICATED_IN_OTHER_GROUP',
  'NUMBER_OF_COPIES_GREATER_THAN_PROVIDERS',
  'GROUP_NAME_ALREADY_USED',
  'PROVIDER_ALREADY_USED',
  'INVALID_PROVIDER_ADDRESS',
  'NOT_SHORT_ADDRESS',
  'NOT_FOUND_ON_CHAIN',
  'GROUP_NAME_CONTAINS_RESERVED_WORD_MIX',
] as const
export type ImportCode = (typeof IMPORT_CODES)[number]

export const MAX_GROUPS = 10
export const DEFAULT_MIX_COPIES = 3

/**
 * The import/export document. Shape errors are plain 400s; the rules with
 * codes are checked after, and only then the bounds of `numberOfCopies`
 * (so a group with no providers and 0 copies gets its code).
 */
export const PolicyDocumentSchema = z.strictObject({
  settings: z.strictObject({ priority: z.enum(['policy_respected', 'number_of_copies']) }),
  mixGroup: z.strictObject({ numberOfCopies: z.number().int().min(0).max(1000) }),
  groups: z
    .array(
      z.strictObject({
        name: z.string().trim().min(1).max(100),
        numberOfCopies: z.number().int().min(0).max(1000),
        // Empty lists are allowed here so that the import code can name the problem.
        providers: z.array(z.strictObject({ addressId: z.string().max(200), comment: z.string().max(1000).default('') })).max(1000),
      }),
    )
    .max(1000),
})
export type PolicyDocument = z.infer<typeof PolicyDocumentSchema>

export interface PolicyStore {
  export(tenantId: number): PolicyDocument
  /** Validates against every rule, then writes all of it or nothing. */
  import(tenantId: number, doc: PolicyDocument, options: { replace: boolean; blacklist: string[]; network: NetworkPort; addressNetwork: AddressNetwork }): Promise<void>
}

const importError = (code: ImportCode) => badRequest(code, code)

export function createPolicyStore(db: Db): PolicyStore {
  const q = {
    policy: db.prepare('SELECT priority, mix_copies FROM policies WHERE tenant_id = ?'),
    groups: db.prepare('SELECT name, number_of_copies FROM policy_groups WHERE tenant_id = ? ORDER BY position'),
    providers: db.prepare('SELECT group_name, address_id, comment FROM policy_providers WHERE tenant_id = ? ORDER BY position'),
    upsertPolicy: db.prepare(
      'INSERT INTO policies (tenant_id, priority, mix_copies) VALUES (?, ?, ?) ON CONFLICT (tenant_id) DO UPDATE SET priority = excluded.priority, mix_copies = excluded.mix_copies',
    ),
    deleteGroups: db.prepare('DELETE FROM policy_groups WHERE tenant_id = ?'),
    insertGroup: db.prepare('INSERT INTO policy_groups (tenant_id, name, position, number_of_copies) VALUES (?, ?, ?, ?)'),
    insertProvider: db.prepare('INSERT INTO policy_providers (tenant_id, group_name, address_id, comment, position) VALUES (?, ?, ?, ?, ?)'),
    maxPosition: db.prepare('SELECT coalesce(max(position), -1) FROM policy_groups WHERE tenant_id = ?').pluck(),
    maxProviderPosition: db.prepare('SELECT coalesce(max(position), -1) FROM policy_providers WHERE tenant_id = ?').pluck(),
  }

  const exportDoc = (tenantId: number): PolicyDocument => {
    const p = q.policy.get(tenantId) as { priority: PolicyDocument['settings']['priority']; mix_copies: number } | undefined
    const providers = q.providers.all(tenantId) as { group_name: string; address_id: string; comment: string }[]
    const groups = (q.groups.all(tenantId) as { name: string; number_of_copies: number }[]).map((g) => ({
      name: g.name,
      numberOfCopies: g.number_of_copies,
      providers: providers.filter((p) => p.group_name === g.name).map((p) => ({ addressId: p.address_id, comment: p.comment })),
    }))
    return {
      settings: { priority: p?.priority ?? 'policy_respected' },
      mixGroup: { numberOfCopies: p?.mix_copies ?? DEFAULT_MIX_COPIES },
      groups,
    }
  }

  const write = db.transaction((tenantId: number, doc: PolicyDocument, replace: boolean) => {
    q.upsertPolicy.run(tenantId, doc.settings.priority, doc.mixGroup.numberOfCopies)
    if (replace) q.deleteGroups.run(tenantId)
    let position = (q.maxPosition.get(tenantId) as number) + 1
    let providerPosition = (q.maxProviderPosition.get(tenantId) as number) + 1
    for (const g of doc.groups) {
      q.insertGroup.run(tenantId, g.name, position++, g.numberOfCopies)
      for (const p of g.providers) q.insertProvider.run(tenantId, g.name, p.addressId, p.comment, providerPosition++)
    }
  })

  return {
    export: exportDoc,
    async import(tenantId, doc, options) {
      const groups = doc.groups
      if (groups.length > MAX_GROUPS) throw importError('NUMBER_OF_GROUP_LIMIT_EXCEEDED')
      const names = new Set<string>()
      const seenProviders = new Set<string>()
      for (const g of groups) {
        if (/mix/i.test(g.name)) throw importError('GROUP_NAME_CONTAINS_RESERVED_WORD_MIX')
        const key = g.name.toLowerCase()
        if (names.has(key)) throw importError('GROUP_NAME_MUST_BE_UNIQUE')
        names.add(key)
        if (g.providers.length === 0) throw importError('GROUP_MUST_CONTAINS_AT_LEAST_ONE_PROVIDER')
        for (const p of g.providers) {
          const parsed = parseAddressOn(p.addressId, options.addressNetwork)
          if (!parsed.ok) throw importError('INVALID_PROVIDER_ADDRESS')
          if (parsed.address.protocol !== 0) throw importError('NOT_SHORT_ADDRESS')
          if (seenProviders.has(p.addressId)) throw importError('PROVIDER_DUPLICATED_IN_OTHER_GROUP')
          seenProviders.add(p.addressId)
        }
        if (g.numberOfCopies > g.providers.length) throw importError('NUMBER_OF_COPIES_GREATER_THAN_PROVIDERS')
        if (g.numberOfCopies < 1) throw badRequest(`groups "${g.name}": numberOfCopies must be at least 1`)
      }
      // The mix group's copies go to providers outside the groups: at most as many as the network
      // has (a plain Lotus node lists none: no upper bound then), and 0 only when groups ask for copies.
      const mixCopies = doc.mixGroup.numberOfCopies
      const known = (await options.network.listProviders()).filter((p) => !seenProviders.has(p)).length
      if (known > 0 && mixCopies > known) throw importError('NUMBER_OF_COPIES_GREATER_THAN_PROVIDERS')
      const groupsAfter = options.replace ? groups.length : groups.length + exportDoc(tenantId).groups.length
      if (mixCopies < 1 && groupsAfter === 0) throw badRequest('mixGroup.numberOfCopies: must be at least 1 when no group asks for copies')
      const blacklist = new Set(options.blacklist)
      if ([...seenProviders].some((p) => blacklist.has(p))) throw importError('PROVIDER_BLACKLISTED')
      if (!options.replace) {
        const current = exportDoc(tenantId)
        if (current.groups.some((g) => names.has(g.name.toLowerCase()))) throw importError('GROUP_NAME_ALREADY_USED')
        if (current.groups.some((g) => g.providers.some((p) => seenProviders.has(p.addressId)))) throw importError('PROVIDER_ALREADY_USED')
        if (current.groups.length + groups.length > MAX_GROUPS) throw importError('NUMBER_OF_GROUP_LIMIT_EXCEEDED')
      }
      // Last, as it asks the chain: every provider must be a storage provider there.
      for (const p of seenProviders) {
        if (!(await options.network.minerInfo(p))) throw importError('NOT_FOUND_ON_CHAIN')
      }
      try {
        write(tenantId, doc, options.replace)
      } catch (err) {
        // A concurrent import won the race for a name or provider; the transaction rolled back.
        if ((err as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT')) throw importError('PROVIDER_ALREADY_USED')
        throw err
      }
    },
  }
}

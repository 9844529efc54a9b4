import { z } from 'zod'
import { parseAddressOn, type AddressNetwork } from '../shared/address.ts'
import { isConstraintViolation, type Sql } from '../shared/sql/index.ts'
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
  export(tenantId: number): Promise<PolicyDocument>
  /** Validates against every rule, then writes all of it or nothing. */
  import(
    tenantId: number,
    doc: PolicyDocument,
    options: { replace: boolean; blacklist: string[]; network: NetworkPort; addressNetwork: AddressNetwork },
  ): Promise<void>
}

const importError = (code: ImportCode) => badRequest(code, code)

export function createPolicyStore(sql: Sql): PolicyStore {
  const exportDoc = async (tenantId: number): Promise<PolicyDocument> => {
    const p = await sql.get<{ priority: PolicyDocument['settings']['priority']; mix_copies: number }>(
      'SELECT priority, mix_copies FROM policies WHERE tenant_id = ?',
      [tenantId],
    )
    // Groups and their providers in one statement: one snapshot, even while another replica replaces the policy.
    const rows = await sql.all<{ name: string; number_of_copies: number; address_id: string | null; comment: string | null }>(
      `SELECT g.name, g.number_of_copies, pp.address_id, pp.comment
       FROM policy_groups g LEFT JOIN policy_providers pp ON pp.tenant_id = g.tenant_id AND pp.group_name = g.name
       WHERE g.tenant_id = ? ORDER BY g.position, pp.position`,
      [tenantId],
    )
    const groups: PolicyDocument['groups'] = []
    for (const r of rows) {
      if (groups.at(-1)?.name !== r.name) groups.push({ name: r.name, numberOfCopies: r.number_of_copies, providers: [] })
      if (r.address_id !== null) groups.at(-1)!.providers.push({ addressId: r.address_id, comment: r.comment! })
    }
    return {
      settings: { priority: p?.priority ?? 'policy_respected' },
      mixGroup: { numberOfCopies: p?.mix_copies ?? DEFAULT_MIX_COPIES },
      groups,
    }
  }

  // All of it or nothing: a replace never leaves the tenant without its old groups and without the new ones.
  const write = (tenantId: number, doc: PolicyDocument, replace: boolean) =>
    sql.transaction(async (tx) => {
      await tx.run(
        'INSERT INTO policies (tenant_id, priority, mix_copies) VALUES (?, ?, ?) ON CONFLICT (tenant_id) DO UPDATE SET priority = excluded.priority, mix_copies = excluded.mix_copies',
        [tenantId, doc.settings.priority, doc.mixGroup.numberOfCopies],
      )
      if (replace) await tx.run('DELETE FROM policy_groups WHERE tenant_id = ?', [tenantId])
      const next = async (table: string) =>
        (await tx.get<{ n: number }>(`SELECT coalesce(max(position), -1) + 1 AS n FROM ${table} WHERE tenant_id = ?`, [tenantId]))!.n
      let position = await next('policy_groups')
      let providerPosition = await next('policy_providers')
      for (const g of doc.groups) {
        await tx.run('INSERT INTO policy_groups (tenant_id, name, position, number_of_copies) VALUES (?, ?, ?, ?)', [
          tenantId,
          g.name,
          position++,
          g.numberOfCopies,
        ])
        for (const p of g.providers) {
          await tx.run('INSERT INTO policy_providers (tenant_id, group_name, address_id, comment, position) VALUES (?, ?, ?, ?, ?)', [
            tenantId,
            g.name,
            p.addressId,
            p.comment,
            providerPosition++,
          ])
        }
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
      const groupsAfter = options.replace ? groups.length : groups.length + (await exportDoc(tenantId)).groups.length
      if (mixCopies < 1 && groupsAfter === 0) throw badRequest('mixGroup.numberOfCopies: must be at least 1 when no group asks for copies')
      const blacklist = new Set(options.blacklist)
      if ([...seenProviders].some((p) => blacklist.has(p))) throw importError('PROVIDER_BLACKLISTED')
      /** What the tenant's policy, as it is now, already has of this import's names and providers. */
      const conflictWithCurrent = async () => {
        const current = await exportDoc(tenantId)
        if (current.groups.some((g) => names.has(g.name.toLowerCase()))) return importError('GROUP_NAME_ALREADY_USED')
        if (current.groups.some((g) => g.providers.some((p) => seenProviders.has(p.addressId)))) return importError('PROVIDER_ALREADY_USED')
        return current.groups.length + groups.length > MAX_GROUPS ? importError('NUMBER_OF_GROUP_LIMIT_EXCEEDED') : undefined
      }
      if (!options.replace) {
        const conflict = await conflictWithCurrent()
        if (conflict) throw conflict
      }
      // Last, as it asks the chain: every provider must be a storage provider there.
      for (const p of seenProviders) {
        if (!(await options.network.minerInfo(p))) throw importError('NOT_FOUND_ON_CHAIN')
      }
      try {
        await write(tenantId, doc, options.replace)
      } catch (err) {
        // A concurrent import (here or on another replica) won the race for a name or provider; the transaction
        // rolled back. Say which, as the same import would have been told had it come second.
        if (isConstraintViolation(err)) throw (await conflictWithCurrent()) ?? importError('PROVIDER_ALREADY_USED')
        throw err
      }
    },
  }
}

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { expectErrorEnvelope, startTestService, type TestService } from './helpers.ts'

let t: TestService
let sp: string[]
const importPath = '/private/v1/onboarding-policy/import'
const exportPath = '/private/v1/onboarding-policy/export'

beforeAll(async () => {
  t = await startTestService()
  sp = await t.simnet.listProviders()
})
afterAll(() => t.close())

// Each test starts from an empty policy of the default tenant.
beforeEach(async () => {
  const r = await t.post(`${importPath}?mode=replace`, doc([]))
  expect(r.status).toBe(200)
})

const group = (name: string, providers: string[], numberOfCopies = 1) => ({
  name,
  numberOfCopies,
  providers: providers.map((addressId) => ({ addressId, comment: `${name} member` })),
})
function doc(groups: unknown[], mix = 2) {
  return { settings: { priority: 'policy_respected' }, mixGroup: { numberOfCopies: mix }, groups }
}
async function current() {
  return (await t.post(exportPath)).json.result
}
async function expectCode(body: unknown, code: string, query = '') {
  const before = await current()
  const r = await t.post(importPath + query, body)
  expect(r.status).toBe(400)
  expectErrorEnvelope(r.json)
  expect(r.json.error.message).toBe(code)
  // All or nothing: a failed import changes nothing.
  expect(await current()).toEqual(before)
}

describe('onboarding policy import/export', () => {
  it('round-trips a valid policy; the import answers 200 with no body', async () => {
    const policy = doc([group('europe', [sp[0], sp[1]], 2), group('asia', [sp[2]])], 1)
    const r = await t.post(`${importPath}?mode=replace`, policy)
    expect(r.status).toBe(200)
    expect(r.text).toBe('')
    expect(await current()).toEqual(policy)
  })

  it('merges by default: groups are added, settings replaced', async () => {
    await t.post(importPath, doc([group('one', [sp[0]])]))
    await t.post(importPath, { ...doc([group('two', [sp[1]])], 4), settings: { priority: 'number_of_copies' } })
    const p = await current()
    expect(p.groups.map((g: { name: string }) => g.name)).toEqual(['one', 'two'])
    expect(p.settings.priority).toBe('number_of_copies')
    expect(p.mixGroup.numberOfCopies).toBe(4)
  })

  it('PROVIDER_BLACKLISTED', async () => {
    const tenant = (await t.service.tenants.byName('default'))!
    await t.service.tenants.addToBlacklist(tenant.id, sp[3])
    try {
      await expectCode(doc([group('g', [sp[3]])]), 'PROVIDER_BLACKLISTED')
    } finally {
      await t.service.tenants.removeFromBlacklist(tenant.id, sp[3])
    }
  })

  it('NUMBER_OF_GROUP_LIMIT_EXCEEDED (more than 10 groups)', async () => {
    await expectCode(doc(Array.from({ length: 11 }, (_, i) => group(`g${i}`, [sp[i]]))), 'NUMBER_OF_GROUP_LIMIT_EXCEEDED')
  })

  it('NUMBER_OF_GROUP_LIMIT_EXCEEDED when a merge would pass 10 groups', async () => {
    expect((await t.post(importPath, doc(Array.from({ length: 8 }, (_, i) => group(`g${i}`, [sp[i]]))))).status).toBe(200)
    await expectCode(doc([group('h1', [sp[10]]), group('h2', [sp[11]]), group('h3', [sp[12]])]), 'NUMBER_OF_GROUP_LIMIT_EXCEEDED')
  })

  it('GROUP_MUST_CONTAINS_AT_LEAST_ONE_PROVIDER, whatever numberOfCopies says', async () => {
    await expectCode(doc([{ name: 'empty', numberOfCopies: 1, providers: [] }]), 'GROUP_MUST_CONTAINS_AT_LEAST_ONE_PROVIDER')
    await expectCode(doc([{ name: 'empty', numberOfCopies: 0, providers: [] }]), 'GROUP_MUST_CONTAINS_AT_LEAST_ONE_PROVIDER')
  })

  it('refuses a group asking for 0 copies, and a policy asking for none at all, naming the field', async () => {
    for (const body of [doc([group('a', [sp[0]], 0)]), doc([], 0)]) {
      const r = await t.post(`${importPath}?mode=replace`, body)
      expect(r.status).toBe(400)
      expect(r.json.error.message).toMatch(/numberOfCopies:? must be at least 1/)
    }
    // No copies beyond the groups' own is a policy.
    expect((await t.post(importPath, doc([group('a', [sp[0]])], 0))).status).toBe(200)
  })

  it('NUMBER_OF_COPIES_GREATER_THAN_PROVIDERS for a mix group asking more copies than the network has providers', async () => {
    const known = (await t.simnet.listProviders()).length
    await expectCode(doc([group('a', [sp[0]])], known + 1), 'NUMBER_OF_COPIES_GREATER_THAN_PROVIDERS')
    await expectCode(doc([], 100), 'NUMBER_OF_COPIES_GREATER_THAN_PROVIDERS')
    expect((await t.post(importPath, doc([], known))).status).toBe(200)
  })

  it('GROUP_NAME_MUST_BE_UNIQUE within the import', async () => {
    await expectCode(doc([group('same', [sp[0]]), group('same', [sp[1]])]), 'GROUP_NAME_MUST_BE_UNIQUE')
  })

  it('PROVIDER_DUPLICATED_IN_OTHER_GROUP within the import', async () => {
    await expectCode(doc([group('a', [sp[0]]), group('b', [sp[0]])]), 'PROVIDER_DUPLICATED_IN_OTHER_GROUP')
  })

  it('NUMBER_OF_COPIES_GREATER_THAN_PROVIDERS', async () => {
    await expectCode(doc([group('a', [sp[0], sp[1]], 3)]), 'NUMBER_OF_COPIES_GREATER_THAN_PROVIDERS')
  })

  it("GROUP_NAME_ALREADY_USED against the tenant's groups on merge", async () => {
    await t.post(importPath, doc([group('europe', [sp[0]])]))
    await expectCode(doc([group('europe', [sp[1]])]), 'GROUP_NAME_ALREADY_USED')
  })

  it("PROVIDER_ALREADY_USED against the tenant's groups on merge", async () => {
    await t.post(importPath, doc([group('europe', [sp[0]])]))
    await expectCode(doc([group('asia', [sp[0]])]), 'PROVIDER_ALREADY_USED')
  })

  it('INVALID_PROVIDER_ADDRESS', async () => {
    await expectCode(doc([group('a', ['not-an-address'])]), 'INVALID_PROVIDER_ADDRESS')
  })

  it('INVALID_PROVIDER_ADDRESS for a testnet address on a mainnet-style network, as availability refuses it', async () => {
    await expectCode(doc([group('a', ['t01234'])]), 'INVALID_PROVIDER_ADDRESS')
    const availability = await t.post('/private/v1/get-provider-availability', {
      providerAddressId: 't01234',
      duration: 518400,
      storagePricePerEpoch: '0',
      verifiedDeal: true,
      transferSize: 1000,
      transferType: 'http',
      removeUnsealedCopy: false,
    })
    expect(availability.status).toBe(400)
    expect(availability.json.error.message).toContain('testnet address (t…), but this service runs on mainnet')
  })

  it('NOT_SHORT_ADDRESS for a valid robust address', async () => {
    await expectCode(doc([group('a', ['f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy'])]), 'NOT_SHORT_ADDRESS')
  })

  it('NOT_FOUND_ON_CHAIN for an ID that is no storage provider', async () => {
    await expectCode(doc([group('a', [sp[0], 'f099'])]), 'NOT_FOUND_ON_CHAIN')
  })

  it('GROUP_NAME_CONTAINS_RESERVED_WORD_MIX, in any case', async () => {
    await expectCode(doc([group('reMIXed', [sp[0]])]), 'GROUP_NAME_CONTAINS_RESERVED_WORD_MIX')
  })

  it('a failing later group leaves earlier valid groups unwritten', async () => {
    await expectCode(doc([group('fine', [sp[0]]), group('broken', [sp[1], 'f099'])]), 'NOT_FOUND_ON_CHAIN')
    expect((await current()).groups).toEqual([])
  })

  it.each([
    [{ settings: { priority: 'whatever' }, mixGroup: { numberOfCopies: 1 }, groups: [] }, 'bad priority'],
    [{ settings: { priority: 'policy_respected' }, groups: [] }, 'missing mixGroup'],
    [{ ...doc([]), extra: true }, 'unknown field'],
    [doc([{ name: 'a', numberOfCopies: -1, providers: [{ addressId: 'f01', comment: '' }] }]), 'negative copies'],
    [doc([{ name: 'a', numberOfCopies: 1, providers: 'f01' }]), 'providers not an array'],
  ])('plain 400 for a malformed document (%s)', async (body: unknown, _why: string) => {
    const r = await t.post(importPath, body)
    expect(r.status).toBe(400)
    expectErrorEnvelope(r.json)
  })

  it('400 for an unknown import mode', async () => {
    const r = await t.post(`${importPath}?mode=overwrite`, doc([]))
    expect(r.status).toBe(400)
  })
})

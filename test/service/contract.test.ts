import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENDPOINTS } from '../../server/service/catalog.ts'
import { ErrorEnvelope } from '../../server/service/schemas.ts'
import { startTestService, T0, type TestService } from './helpers.ts'
import { expectToMatch } from '../helpers/contracts.ts'

/** A valid body for every endpoint that answers with a body (server/service/catalog.ts). */
const SAMPLE_BODIES: Record<string, (provider: string) => unknown> = {
  '/public/v1/ticker/get-latest': () => undefined,
  '/public/v1/ticker/get-latest-by-pair': () => ({ pair: 'FIL_USD' }),
  '/public/v1/get-version': () => undefined,
  '/private/v1/get-on-chain-deals': () => ({}),
  '/private/v1/get-best-available-providers': () => deal(),
  '/private/v1/get-provider-availability': (provider) => deal({ providerAddressId: provider }),
  '/private/v1/get-network-epoch-duration-from-days': () => ({ duration: 180 }),
  '/private/v1/get-network-epoch-from-unix-timestamp': () => ({ unixTimestamp: T0 }),
  '/private/v1/onboarding-policy/export': () => undefined,
}
const deal = (extra: Record<string, unknown> = {}) => ({
  duration: 518400,
  storagePricePerEpoch: '0',
  verifiedDeal: false,
  transferSize: 1_000_000,
  transferType: 'http',
  removeUnsealedCopy: false,
  ...extra,
})

describe('deal service answers match its contract (server/service/schemas.ts, the OpenAPI source)', () => {
  let t: TestService
  let provider: string
  beforeAll(async () => {
    t = await startTestService()
    provider = (await t.simnet.listProviders())[0]
  })
  afterAll(() => t.close())

  it('has a sample body for every endpoint that answers with one', () => {
    expect(
      ENDPOINTS.filter((e) => e.response)
        .map((e) => e.path)
        .sort(),
    ).toEqual(Object.keys(SAMPLE_BODIES).sort())
  })

  for (const endpoint of ENDPOINTS.filter((e) => e.response)) {
    it(`${endpoint.method.toUpperCase()} ${endpoint.path}`, async () => {
      const body = SAMPLE_BODIES[endpoint.path](provider)
      const res =
        endpoint.method === 'get'
          ? await fetch(t.url + endpoint.path, { headers: { 'x-api-key': t.key } }).then(async (r) => ({
              status: r.status,
              json: await r.json(),
            }))
          : await t.post(endpoint.path, body)
      // The ticker has nothing to say before an exchange was read: its documented error, not a made-up answer.
      if (res.status !== 200) expectToMatch(ErrorEnvelope, res.json)
      else expectToMatch(endpoint.response!, res.json)
      if (!endpoint.path.includes('/ticker/')) expect(res.status).toBe(200)
    })
  }
})

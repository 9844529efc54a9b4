import { describe, expect, it } from 'vitest'
import { fundsChecks, gatewayCheck } from '../../server/bridge/link-checks.ts'

const URL = 'http://127.0.0.1:9011'

describe('the link test: the bridge reaching the gateway', () => {
  it('says what to do for each way the probe fails, and that it works when it does', () => {
    const cases: [Parameters<typeof gatewayCheck>[2], RegExp][] = [
      [{ success: true, status: 404, message: 'The gateway answered' }, /^The bridge reaches the gateway at http:\/\/127\.0\.0\.1:9011/],
      [{ success: false, status: 0, message: 'No answer within 5000 ms' }, /did not answer within 5000 ms: check that it runs/],
      [
        { success: false, status: 0, message: 'Could not connect: ECONNREFUSED' },
        /could not connect to .* \(ECONNREFUSED\): start the gateway or correct the URL\.$/,
      ],
      [
        { success: false, status: 401, message: 'The gateway refused the credentials' },
        /set the user and password to the gateway's GATEWAY_USER/,
      ],
      [{ success: false, status: 302, message: 'The gateway redirects to https://x; use that address' }, /use that address\.$/],
      [
        { success: false, status: 200, message: 'Not a gateway' },
        /answered HTTP 200 but is not a gateway: point the URL at the gateway itself/,
      ],
    ]
    for (const [result, sentence] of cases) {
      const check = gatewayCheck(URL, 5000, result)
      expect(check.id).toBe('server-gateway')
      expect(check.ok).toBe(result.success)
      expect(check.sentence).toMatch(sentence)
    }
    expect(gatewayCheck('', 5000, { success: false, status: 0, message: 'No gateway URL is configured' }).sentence).toMatch(/GATEWAY_URL/)
  })
})

describe("the link test: each route's funds", () => {
  it('Onchain Cloud: OK while HEALTHY, what to deposit and by when otherwise', () => {
    const at = (status: 'HEALTHY' | 'WARNING' | 'DEFICIT') =>
      fundsChecks({ onchainCloud: { status, funds: '12.5', fundedUntil: '2027-03-03T10:00:00.000Z' } })[0]
    expect(at('HEALTHY')).toEqual({
      id: 'funds-onchain-cloud',
      ok: true,
      sentence: 'Filecoin Onchain Cloud is paid for until 2027-03-03 10:00 UTC, with 12.5 USDFC deposited.',
    })
    expect(at('WARNING')).toMatchObject({
      ok: false,
      sentence: expect.stringMatching(/only until 2027-03-03 10:00 UTC: deposit USDFC into Filecoin Pay/),
    })
    // On a sped-up simulated network, the same words as the tab and `npm run wallet -- foc`: the date is near, the days many.
    const inAnHour = new Date(Date.now() + 3_600_000)
    const simulated = fundsChecks({
      onchainCloud: { status: 'HEALTHY', funds: '0.2384', fundedUntil: inAnHour.toISOString(), fundedDays: 26.2 },
    })[0]
    expect(simulated?.sentence).toBe(
      `Filecoin Onchain Cloud is paid for until ${inAnHour.toISOString().slice(0, 16).replace('T', ' ')} UTC (26 days in simulated network time), with 0.2384 USDFC deposited.`,
    )
    expect(at('DEFICIT')).toMatchObject({
      ok: false,
      sentence: expect.stringMatching(/12\.5 USDFC no longer pay for what is stored: deposit USDFC .* now\.$/),
    })
  })

  it('deal market: OK with free escrow or DataCap, the escrow command when it has neither', () => {
    const market = (escrow: string, locked: string, dataCap: string | null) => fundsChecks({ dealMarket: { escrow, locked, dataCap } })[0]
    expect(market('1.5', '0.5', null)).toMatchObject({
      id: 'funds-market',
      ok: true,
      sentence: 'The deal market has 1 FIL free in escrow.',
    })
    expect(market('0', '0', '1099511627776')).toMatchObject({
      ok: true,
      sentence: expect.stringContaining('1099511627776 bytes of DataCap'),
    })
    expect(market('2', '2', null)).toMatchObject({
      ok: false,
      sentence:
        'The deal market has no DataCap and no free escrow (2 FIL, 2 locked): add escrow on the gateway with "npm run wallet -- add-escrow <FIL>".',
    })
    expect(market('0', '0', '0').ok).toBe(false)
  })

  it('says nothing of a route the gateway does not use', () => {
    expect(fundsChecks({})).toEqual([])
  })
})

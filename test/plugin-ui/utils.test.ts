// @vitest-environment happy-dom
import { AxiosError } from 'axios'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { toApiError } from '../../plugin-ui/services/errors.ts'
import { pdpFundingShortfall } from '../../plugin-ui/utils/expiration.ts'
import { toFileTarget } from '../../plugin-ui/utils/file-target.ts'
import { firstProofDueAt, provedAt, relativeTime, shortenCid } from '../../plugin-ui/utils/format.ts'
import { dealExplorerUrl, epochToUnix, ipfsUrl, providerExplorerUrl } from '../../plugin-ui/utils/network.ts'
import { validateLinkForm, type LinkForm } from '../../plugin-ui/utils/validate-settings.ts'

const form = (over: Partial<LinkForm> = {}): LinkForm => ({
  gatewayUrl: 'https://gateway.example.org',
  gatewayUser: 'bridge',
  gatewayPassword: '',
  pathMap: '/{user}',
  network: 'mainnet',
  ipfsGateway: 'https://ipfs.io',
  ...over,
})

describe('validateLinkForm', () => {
  it('accepts a complete link, and an empty gateway URL (embedded gateway)', () => {
    expect(validateLinkForm(form())).toEqual({})
    expect(validateLinkForm(form({ gatewayUrl: '', ipfsGateway: '' }))).toEqual({})
    expect(validateLinkForm(form({ pathMap: '/mounts/{user}/files' }))).toEqual({})
  })

  it.each<[Partial<LinkForm>, keyof LinkForm]>([
    [{ gatewayUrl: 'gateway.example.org' }, 'gatewayUrl'],
    [{ gatewayUrl: 'ftp://gateway.example.org' }, 'gatewayUrl'],
    [{ gatewayUrl: 'https://user:pw@gateway.example.org' }, 'gatewayUrl'],
    [{ gatewayUser: 'a:b' }, 'gatewayUser'],
    [{ pathMap: 'user' }, 'pathMap'],
    [{ pathMap: '/../{user}' }, 'pathMap'],
    [{ pathMap: '/a//{user}' }, 'pathMap'],
    [{ pathMap: '/a\\{user}' }, 'pathMap'],
    [{ pathMap: '/{group}' }, 'pathMap'],
    [{ pathMap: '/{user' }, 'pathMap'],
    [{ network: 'testnet' }, 'network'],
    [{ ipfsGateway: 'javascript:alert(1)' }, 'ipfsGateway'],
  ])('flags %o on %s', (over, field) => {
    expect(Object.keys(validateLinkForm(form(over)))).toEqual([field])
  })
})

describe('toFileTarget', () => {
  it('joins a legacy FileInfo path and name', () => {
    expect(toFileTarget({ path: '/', name: 'a.txt', type: 'file' })).toEqual({ filePath: '/a.txt', name: 'a.txt', isFolder: false })
    expect(toFileTarget({ path: '/Docs/', name: 'Sub', type: 'dir' })).toEqual({ filePath: '/Docs/Sub', name: 'Sub', isFolder: true })
    expect(toFileTarget({ path: '/Docs', name: 'x', isDirectory: () => true })?.isFolder).toBe(true)
  })

  it('reads a Nextcloud 33 node', () => {
    expect(toFileTarget({ path: '/Photos/cat.jpg', basename: 'cat.jpg', type: 'file' })).toEqual({
      filePath: '/Photos/cat.jpg',
      name: 'cat.jpg',
      isFolder: false,
    })
    expect(toFileTarget({ path: '/Photos', basename: 'Photos', type: 'folder' })?.isFolder).toBe(true)
  })

  it('refuses what is not a file', () => {
    expect(toFileTarget(null)).toBeNull()
    expect(toFileTarget('a.txt')).toBeNull()
    expect(toFileTarget({ name: 'a.txt' })).toBeNull()
  })
})

describe('network facts', () => {
  it('links Filfox for mainnet and calibration, nothing for the simulated network', () => {
    expect(providerExplorerUrl('mainnet', 'f01234')).toBe('https://filfox.info/en/address/f01234')
    expect(dealExplorerUrl('calibration', 42)).toBe('https://calibration.filfox.info/en/deal/42')
    expect(providerExplorerUrl('simnet', 'f01234')).toBeUndefined()
    expect(dealExplorerUrl('simnet', 42)).toBeUndefined()
  })

  it('turns epochs into unix seconds: genesis + epoch × 30', () => {
    expect(epochToUnix(0, 'mainnet')).toBe(1598306400)
    expect(epochToUnix(2880, 'calibration')).toBe(1667326380 + 86400)
    expect(epochToUnix(10, 'simnet')).toBeUndefined()
    expect(epochToUnix(10, 'simnet', 1000)).toBe(1300)
  })

  it('builds IPFS links only with a gateway', () => {
    expect(ipfsUrl('https://ipfs.io/', 'bafy')).toBe('https://ipfs.io/ipfs/bafy')
    expect(ipfsUrl('', 'bafy')).toBeUndefined()
  })

  it('shortens long CIDs and leaves short ones', () => {
    expect(shortenCid('bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku')).toBe('bafkreihdw…quvyku')
    expect(shortenCid('bafy123')).toBe('bafy123')
  })
})

describe('toApiError', () => {
  const axiosError = (status: number, data: unknown) =>
    new AxiosError('x', 'ERR', undefined, {}, { status, statusText: '', data, headers: {}, config: {} as never })

  it.each([
    [400, 'bad-request'],
    [401, 'unauthorized'],
    [404, 'not-found'],
    [412, 'csrf'],
    [429, 'throttled'],
    [502, 'gateway-unreachable'],
    [504, 'gateway-timeout'],
    [500, 'server-error'],
  ])('maps HTTP %i to %s and keeps the server message', (status, code) => {
    const err = toApiError(axiosError(status, { success: false, error: 'from the bridge' }))
    expect(err.code).toBe(code)
    expect(err.status).toBe(status)
    expect(err.message).toBe('from the bridge')
  })

  it("reads Nextcloud's 412 { message } and reports a lost connection as network", () => {
    expect(toApiError(axiosError(412, { message: 'CSRF check failed' })).message).toBe('CSRF check failed')
    expect(toApiError(new AxiosError('Network Error', 'ERR_NETWORK')).code).toBe('network')
  })
})

describe("relativeTime (Nextcloud's rules)", () => {
  afterEach(() => vi.useRealTimers())
  const at = (iso: string) => Date.parse(iso) / 1000

  it.each([
    // Across a month end and a year end, a few days stay a few days.
    ['2026-11-29T12:00:00Z', '2026-12-02T12:00:00Z', 'in 3 days'],
    ['2026-12-30T12:00:00Z', '2027-01-02T12:00:00Z', 'in 3 days'],
    ['2027-01-02T12:00:00Z', '2026-12-30T12:00:00Z', '3 days ago'],
    ['2026-11-23T12:00:00Z', '2026-11-24T12:00:00Z', 'tomorrow'],
    ['2026-11-23T12:00:00Z', '2026-12-07T12:00:00Z', 'in 2 weeks'],
    ['2026-11-23T12:00:00Z', '2026-11-23T07:00:00Z', '5 hours ago'],
  ])('from %s, %s reads "%s"', (now, then, expected) => {
    vi.useFakeTimers({ now: Date.parse(now) })
    expect(relativeTime(at(then), 'en')).toBe(expected)
  })

  it.each([
    // The reported case: May 2028 seen in November 2026 is not "next year".
    ['2026-11-23T12:00:00Z', '2028-05-15T12:00:00Z'],
    ['2026-11-23T12:00:00Z', '2027-01-05T12:00:00Z'],
    ['2026-12-31T12:00:00Z', '2026-11-30T12:00:00Z'],
  ])('from %s gives no relative phrase for %s: the date beside it says it', (now, then) => {
    vi.useFakeTimers({ now: Date.parse(now) })
    expect(relativeTime(at(then), 'en')).toBeUndefined()
  })
})

describe("provedAt (a PDP copy's last proof in plain words)", () => {
  // Local times, so that "today" is the reader's day in any time zone the tests run in.
  const local = (y: number, m: number, d: number, h: number, min: number) => new Date(y, m - 1, d, h, min).getTime()
  const seconds = (ms: number) => ms / 1000
  const time = (ms: number) => new Intl.DateTimeFormat('en-GB', { timeStyle: 'short' }).format(new Date(ms))

  it('says today or yesterday with the time, and the date further back', () => {
    const now = local(2026, 11, 26, 18, 30)
    expect(provedAt(seconds(local(2026, 11, 26, 14, 5)), now, 'en-GB')).toBe(`proved today at ${time(local(2026, 11, 26, 14, 5))}`)
    expect(provedAt(seconds(local(2026, 11, 26, 0, 1)), now, 'en-GB')).toBe('proved today at 00:01')
    expect(provedAt(seconds(local(2026, 11, 25, 23, 59)), now, 'en-GB')).toBe('proved yesterday at 23:59')
    expect(provedAt(seconds(local(2026, 11, 24, 9, 12)), now, 'en-GB')).toBe('proved on 24 Nov 2026, 09:12')
    // Across a year end.
    expect(provedAt(seconds(local(2026, 12, 31, 22, 0)), local(2027, 1, 1, 8, 0), 'en-GB')).toBe('proved yesterday at 22:00')
  })

  it("says when a committed copy's first proof is due: today or tomorrow about a time, the date further on, and once due, any moment", () => {
    const now = local(2026, 11, 27, 10, 5)
    expect(firstProofDueAt(seconds(local(2026, 11, 27, 12, 25)), now, 'en-GB')).toBe('first proof due today about 12:25')
    // Mainnet: a proof a day, so a copy committed this morning is first proved tomorrow.
    expect(firstProofDueAt(seconds(local(2026, 11, 28, 14, 20)), now, 'en-GB')).toBe('first proof due tomorrow about 14:20')
    expect(firstProofDueAt(seconds(local(2026, 11, 30, 9, 0)), now, 'en-GB')).toBe('first proof due on 30 Nov 2026, 09:00')
    expect(firstProofDueAt(seconds(local(2026, 11, 27, 10, 0)), now, 'en-GB')).toBe('first proof due any moment now')
    // Across a year end.
    expect(firstProofDueAt(seconds(local(2027, 1, 1, 0, 30)), local(2026, 12, 31, 22, 0), 'en-GB')).toBe(
      'first proof due tomorrow about 00:30',
    )
  })
})

describe('pdpFundingShortfall (warm copies whose funding runs short)', () => {
  const day = 86400
  const now = 1_800_000_000
  // Mainnet: 30 s epochs from its genesis; an epoch `days` ahead of `now`.
  const genesis = 1598306400
  const epochIn = (days: number) => Math.round((now + days * day - genesis) / 30)
  const pdp = (endEpoch: number, state = 'active') => ({
    provider: 'pdp:1',
    dealId: 1,
    endEpoch,
    isRetrievable: true,
    state,
    route: 'pdp' as const,
  })
  const group = (...deals: object[]) => ({ state: 'offloaded', retrievableCopies: 1, deals }) as never

  it('is silent at more than 14 days of funding, and names the date at 14 days or less', () => {
    expect(pdpFundingShortfall([group(pdp(epochIn(15)))], 'mainnet', undefined, undefined, now)).toBeUndefined()
    expect(pdpFundingShortfall([group(pdp(epochIn(13)))], 'mainnet', undefined, undefined, now)).toEqual({
      until: genesis + epochIn(13) * 30,
      ranOut: false,
    })
  })

  it('says the funds ran out once the date has passed (the account is in deficit)', () => {
    expect(pdpFundingShortfall([group(pdp(epochIn(-0.01)))], 'mainnet', undefined, undefined, now)?.ranOut).toBe(true)
  })

  it('takes the earliest paid copy, and ignores uploads not yet in a data set and deal-market deals', () => {
    const market = { provider: 'f01000', dealId: 5, endEpoch: epochIn(1), isRetrievable: true, state: 'active' }
    expect(
      pdpFundingShortfall([group(market, pdp(epochIn(2), 'proposed'), pdp(epochIn(200)))], 'mainnet', undefined, undefined, now),
    ).toBeUndefined()
    expect(
      pdpFundingShortfall([group(pdp(epochIn(200))), group(pdp(epochIn(3), 'published'))], 'mainnet', undefined, undefined, now)?.until,
    ).toBe(genesis + epochIn(3) * 30)
  })

  it("counts days on a sped-up simulated network's own clock", () => {
    // 0.05 s epochs (600× real time): 20 network days are under 50 wall-clock minutes away, and are not short.
    const simGenesis = now - 3600
    const at = (networkDays: number) => Math.round((now - simGenesis + (networkDays * day) / 600) / 0.05)
    expect(pdpFundingShortfall([group(pdp(at(20)))], 'simnet', simGenesis, 0.05, now)).toBeUndefined()
    expect(pdpFundingShortfall([group(pdp(at(10)))], 'simnet', simGenesis, 0.05, now)?.ranOut).toBe(false)
  })
})

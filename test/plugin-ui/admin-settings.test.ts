// @vitest-environment happy-dom
import { flushPromises, mount, type VueWrapper } from '@vue/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import AdminSettings from '../../plugin-ui/views/AdminSettings.vue'
import { ADMIN_SETTINGS, CONFIG, http, TEST_LINK } from './http-mock.ts'

vi.mock('@nextcloud/axios', () => import('./http-mock.ts').then((m) => m.axiosModule))

const saved = {
  gatewayUrl: 'http://127.0.0.1:9011',
  gatewayUser: 'bridge',
  gatewayPasswordSet: true,
  pathMap: '/{user}',
  network: 'calibration',
  ipfsGateway: 'https://ipfs.io',
}

let wrapper: VueWrapper | undefined

async function open(): Promise<VueWrapper> {
  wrapper = mount(AdminSettings, { attachTo: document.body })
  await flushPromises()
  return wrapper
}

const input = (w: VueWrapper, field: string) => w.get(`[data-test="${field}"] input, input[data-test="${field}"]`)

/** The page after a click on "Test the link", the bridge answering the link test with `data`. */
async function linkTested(data: Record<string, unknown>): Promise<VueWrapper> {
  http.on('POST', TEST_LINK, { status: 200, data })
  const w = await open()
  await w.get('[data-test="test-link"]').trigger('click')
  await flushPromises()
  return w
}

/** The same for a link that works, with what else the gateway said (`extra`). */
const linkWorks = (extra: Record<string, unknown>) =>
  linkTested({ success: true, status: 404, message: 'The gateway answered and accepted the credentials', latencyMs: 3, ...extra })

async function submit(w: VueWrapper) {
  await w.get('[data-test="form"]').trigger('submit')
  await flushPromises()
}

beforeEach(() => {
  ;(window as unknown as { _oc_webroot: string })._oc_webroot = ''
  http.reset()
  http.on('GET', ADMIN_SETTINGS, { status: 200, data: { success: true, settings: saved } })
  // The link test the page runs as it opens (a test's own answer comes after this one), and the route the
  // Files tab asks, which the link test also asks from the browser.
  http.on('POST', TEST_LINK, { status: 200, data: { success: true, status: 404, message: 'saved link works', latencyMs: 1 } })
  http.on('GET', CONFIG, { status: 200, data: { success: true, config: { network: 'calibration', ipfsGateway: 'https://ipfs.io' } } })
})

afterEach(() => {
  wrapper?.unmount()
  wrapper = undefined
  document.body.innerHTML = ''
  http.assertNoUnexpected()
})

describe('AdminSettings', () => {
  it('shows the saved link, and only whether a password is set', async () => {
    const w = await open()
    expect((input(w, 'gatewayUrl').element as HTMLInputElement).value).toBe(saved.gatewayUrl)
    expect((input(w, 'gatewayUser').element as HTMLInputElement).value).toBe('bridge')
    expect((input(w, 'gatewayPassword').element as HTMLInputElement).value).toBe('')
    expect((w.get('[data-test="network"]').element as HTMLSelectElement).value).toBe('calibration')
    expect(w.get('[data-test="password-state"]').text()).toBe('Password: set')
    expect(http.callsTo('GET', ADMIN_SETTINGS)[0].headers['OCS-APIRequest']).toBe('true')
  })

  it('shows "not set" when no password is stored', async () => {
    http.on('GET', ADMIN_SETTINGS, { status: 200, data: { success: true, settings: { ...saved, gatewayPasswordSet: false } } })
    const w = await open()
    expect(w.get('[data-test="password-state"]').text()).toBe('Password: not set')
  })

  it('refuses to save invalid input and says which field is wrong', async () => {
    const w = await open()
    await input(w, 'gatewayUrl').setValue('ftp://gateway')
    await input(w, 'pathMap').setValue('/../{user}')
    await input(w, 'ipfsGateway').setValue('not a url')
    await submit(w)
    expect(http.callsTo('PUT', ADMIN_SETTINGS)).toHaveLength(0)
    for (const field of ['gatewayUrl', 'pathMap', 'ipfsGateway']) {
      expect(input(w, field).attributes('aria-invalid')).toBe('true')
    }
    expect(input(w, 'gatewayUser').attributes('aria-invalid')).not.toBe('true')
  })

  it('says "Required" under an empty required field, and marks it required', async () => {
    const w = await open()
    expect(input(w, 'pathMap').attributes('required')).toBeDefined()
    expect(input(w, 'gatewayUrl').attributes('required')).toBeUndefined()
    await input(w, 'pathMap').setValue('  ')
    await submit(w)
    expect(http.callsTo('PUT', ADMIN_SETTINGS)).toHaveLength(0)
    expect(input(w, 'pathMap').attributes('aria-invalid')).toBe('true')
    const describedBy = (input(w, 'pathMap').attributes('aria-describedby') ?? '').split(' ')
    expect(describedBy.map((id) => document.getElementById(id)?.textContent?.trim()).join(' ')).toContain(
      'Required: the gateway folder of each user, for example /{user}.',
    )
  })

  it('gives the network field a label and help text under it, like every other field', async () => {
    const w = await open()
    const select = w.get('select[data-test="network"]')
    expect(w.get(`label[for="${select.attributes('id')}"]`).text()).toBe('Network')
    expect(select.attributes('aria-describedby')).toBe(w.get('[data-test="network-help"]').attributes('id'))
    expect(w.get('[data-test="network-help"]').text()).toMatch(/^Used only for a gateway that does not say which network/)
  })

  it('saves without the password when none was typed', async () => {
    http.on('PUT', ADMIN_SETTINGS, (req) => ({
      status: 200,
      data: { success: true, settings: { ...saved, ...(req.data as object), gatewayPasswordSet: true } },
    }))
    const w = await open()
    await input(w, 'gatewayUrl').setValue('https://gateway.example.org/')
    await w.get('[data-test="network"]').setValue('mainnet')
    await submit(w)
    const [put] = http.callsTo('PUT', ADMIN_SETTINGS)
    expect(put.data).toEqual({
      gatewayUrl: 'https://gateway.example.org/',
      gatewayUser: 'bridge',
      pathMap: '/{user}',
      network: 'mainnet',
      ipfsGateway: 'https://ipfs.io',
    })
    expect(put.headers['OCS-APIRequest']).toBe('true')
    expect(w.find('[data-test="saved"]').exists()).toBe(true)
  })

  it('sends a newly typed password once and clears the field', async () => {
    http.on('PUT', ADMIN_SETTINGS, { status: 200, data: { success: true, settings: saved } })
    const w = await open()
    await input(w, 'gatewayPassword').setValue('s3cret-pass')
    await submit(w)
    expect((http.callsTo('PUT', ADMIN_SETTINGS)[0].data as { gatewayPassword?: string }).gatewayPassword).toBe('s3cret-pass')
    expect((input(w, 'gatewayPassword').element as HTMLInputElement).value).toBe('')
    expect(w.html()).not.toContain('s3cret-pass')
  })

  it('shows the server error when saving fails', async () => {
    http.on('PUT', ADMIN_SETTINGS, { status: 400, data: { success: false, error: 'gatewayUrl: the gateway refused these credentials' } })
    const w = await open()
    await submit(w)
    expect(w.get('[data-test="save-error"]').text()).toContain('the gateway refused these credentials')
    expect(w.find('[data-test="saved"]').exists()).toBe(false)
  })

  it('tests the link as the form holds it, unsaved, and says plainly that it works', async () => {
    // Our gateway answers the probe path with 404: a working link, which the message must not make look like an error.
    http.on('POST', TEST_LINK, {
      status: 200,
      data: { success: true, status: 404, message: 'The gateway answered and accepted the credentials', latencyMs: 12 },
    })
    const w = await open()
    await input(w, 'gatewayUrl').setValue('https://other-gateway.example.org')
    await w.get('[data-test="test-link"]').trigger('click')
    await flushPromises()
    expect(http.callsTo('POST', TEST_LINK).at(-1)!.data).toMatchObject({ gatewayUrl: 'https://other-gateway.example.org' })
    const result = w.get('[data-test="test-result"]').text()
    expect(result).toBe('The link works (12 ms): The gateway answered and accepted the credentials')
    expect(result).not.toMatch(/HTTP|404/)
  })

  it('checks both directions, browser → bridge and bridge → gateway, with one sentence to act on per failure', async () => {
    const gateway = {
      id: 'server-gateway',
      ok: false,
      sentence: 'The bridge could not connect to http://127.0.0.1:9011 (ECONNREFUSED): start the gateway or correct the URL.',
    }
    // Nextcloud, not the bridge, answers the app's route: the reverse proxy does not send it on.
    http.on('GET', CONFIG, { status: 404, data: '<html>Page not found</html>' })
    const w = await linkTested({ success: false, status: 0, message: 'Could not connect', latencyMs: 1, checks: [gateway] })
    const items = w.get('[data-test="link-checks"]').findAll('li')
    expect(items.map((li) => [li.attributes('data-check'), li.attributes('data-ok'), li.text()])).toEqual([
      [
        'browser-ocs',
        'false',
        "To fix: Your browser's requests to /ocs/v2.php/apps/gateway/ do not reach the bridge (HTTP 404): send that path to the bridge in the reverse proxy (scripts/nginx/gateway.conf).",
      ],
      ['server-gateway', 'false', `To fix: ${gateway.sentence}`],
    ])
    // The browser asked with its OCS header, as the Files tab does.
    expect(http.callsTo('GET', CONFIG)[0].headers['OCS-APIRequest']).toBe('true')
  })

  it("says OK for each direction and route's funds that work", async () => {
    const checks = [
      { id: 'server-gateway', ok: true, sentence: 'The bridge reaches the gateway at http://127.0.0.1:9011 with these credentials.' },
      {
        id: 'funds-onchain-cloud',
        ok: true,
        sentence: 'Filecoin Onchain Cloud is paid for until 2027-03-03 10:00 UTC, with 120.5 USDFC deposited.',
      },
    ]
    const w = await linkTested({ success: true, status: 404, message: 'ok', latencyMs: 1, checks })
    const items = w.get('[data-test="link-checks"]').findAll('li')
    expect(items.map((li) => li.attributes('data-ok'))).toEqual(['true', 'true', 'true'])
    expect(items[0].text()).toBe('OK: Your browser reaches the bridge at /ocs/v2.php/apps/gateway/, as the Files tab will.')
    expect(items[2].text()).toBe(`OK: ${checks[1].sentence}`)
  })

  it('tests the saved link as the page opens, without a click', async () => {
    const w = await open()
    expect(http.callsTo('POST', TEST_LINK)).toHaveLength(1)
    expect(http.callsTo('POST', TEST_LINK)[0].data).toMatchObject({ gatewayUrl: saved.gatewayUrl, gatewayUser: 'bridge' })
    expect(w.get('[data-test="test-result"]').text()).toBe('The link works (1 ms): saved link works')
    expect(w.get('[data-test="link-checks"]').find('[data-check="browser-ocs"]').attributes('data-ok')).toBe('true')
  })

  it('warns when the gateway serves another network than the form names', async () => {
    const warning = 'The gateway serves the calibration network, but these settings say mainnet: dates and explorer links would be wrong'
    const w = await linkWorks({ warning })
    expect(w.get('[data-test="test-warning"]').text()).toBe(warning)
  })

  it('warns when the gateway proposes no deals, with its reason', async () => {
    const dealsWarning = 'The gateway proposes no deals: t1abc has no DataCap'
    const w = await linkWorks({ dealsWarning })
    expect(w.get('[data-test="test-deals-warning"]').text()).toBe(dealsWarning)
    expect(w.find('[data-test="test-warning"]').exists()).toBe(false)
  })

  it('says which deals the gateway proposes: unverified once Fil+ has ended', async () => {
    const dealKind =
      'The gateway proposes unverified: Fil+ ended at network version 29 (FIP-0118): deals are unverified, no DataCap is needed'
    const w = await linkWorks({ dealKind })
    expect(w.get('[data-test="test-deal-kind"]').text()).toBe(dealKind)
  })

  it('says where the next group will be stored: each route, its copies, the most a copy costs a TiB-month, and why', async () => {
    const nextGroup = [
      {
        route: 'the deal market',
        copies: 2,
        price: 'at most 0.5 FIL per TiB-month (about 1.75 USD)',
        why: "unverified deals at each provider's own ask, providers asking more are not offered the group",
      },
      { route: 'Filecoin Onchain Cloud (PDP)', copies: 1, why: 'PDP_COPIES: a copy on Filecoin Onchain Cloud, paid in USDFC' },
      { route: 'the deal market', copies: 0, why: 'on mainnet every deal is paid since Fil+ ended' },
    ]
    const w = await linkWorks({ nextGroup })
    const card = w.get('[data-test="test-next-group"]')
    expect(card.text()).toMatch(/^The next group will be stored on:/)
    expect(card.findAll('li').map((li) => li.text())).toEqual([
      "The deal market: 2 copies, at most 0.5 FIL per TiB-month (about 1.75 USD). Unverified deals at each provider's own ask, providers asking more are not offered the group.",
      'Filecoin Onchain Cloud (PDP): 1 copy. PDP_COPIES: a copy on Filecoin Onchain Cloud, paid in USDFC.',
      'The deal market: no copies. On mainnet every deal is paid since Fil+ ended.',
    ])
  })

  it('says how long the Onchain Cloud account pays for the PDP copies, as HEALTHY, WARNING or DEFICIT', async () => {
    const cases = [
      ['HEALTHY', 'success', /^Filecoin Onchain Cloud \(PDP copies\): 120\.5 USDFC deposited, funded until .*2027.* \(HEALTHY\)\.$/],
      ['WARNING', 'warning', /funded until .*2027.* only \(WARNING: 14 days or less\)\. Deposit USDFC\.$/],
      ['DEFICIT', 'error', /no longer pays for what is stored \(DEFICIT\)\. Deposit USDFC\.$/],
    ] as const
    for (const [status, card, text] of cases) {
      const w = await linkWorks({ onchainCloud: { status, funds: '120.5', fundedUntil: '2027-03-03T10:00:00.000Z' } })
      const note = w.get('[data-test="test-onchain-cloud"]')
      expect(note.text()).toMatch(text)
      expect(note.classes().join(' ')).toContain(`notecard--${card}`)
      w.unmount()
    }
  })

  it("says a sped-up simulated network's 'funded until' with its own span beside the near date (issue 38)", async () => {
    const soon = new Date(Date.now() + 2.4 * 3600_000).toISOString()
    const w = await linkWorks({ onchainCloud: { status: 'HEALTHY', funds: '120.5', fundedUntil: soon, fundedDays: 30 } })
    expect(w.get('[data-test="test-onchain-cloud"]').text()).toMatch(/funded until .+ \(30 days in simulated network time\) \(HEALTHY\)\.$/)
    w.unmount()
  })

  it("says what pays for the deal market's copies: DataCap or escrow, and when the first deal of the stored data ends", async () => {
    const cases = [
      [
        { dataCap: '34359738368', escrow: '0.5', locked: '0.125', dealsUntil: '2028-03-03T10:00:00.000Z' },
        /^Deal market \(sealed copies\): 32 GiB of DataCap left for verified deals; 0\.5 FIL in market escrow, 0\.125 FIL of it locked by deals\. Each deal is paid to its end when made; the first of the stored data's deals ends on .*2028.*\.$/,
      ],
      [
        { dataCap: null, escrow: '2', locked: '0' },
        /^Deal market \(sealed copies\): no DataCap \(not a verified client\); 2 FIL in market escrow, 0 FIL of it locked by deals\.$/,
      ],
    ] as const
    for (const [dealMarket, text] of cases) {
      const w = await linkWorks({ dealMarket })
      expect(w.get('[data-test="test-deal-market"]').text()).toMatch(text)
      w.unmount()
    }
  })

  it('shows a failed link test with the gateway status', async () => {
    const w = await linkTested({ success: false, status: 401, message: 'Unauthorized', latencyMs: 5 })
    expect(w.get('[data-test="test-result"]').text()).toContain('HTTP 401')
    expect(w.get('[data-test="test-result"]').text()).toContain('Unauthorized')
  })

  it('shows a load error with a retry', async () => {
    http.on(
      'GET',
      ADMIN_SETTINGS,
      { status: 403, data: { success: false, error: 'Admins only' } },
      { status: 200, data: { success: true, settings: saved } },
    )
    const w = await open()
    expect(w.get('[data-test="load-error"]').text()).toContain('Admins only')
    await w.get('[data-test="reload"]').trigger('click')
    await flushPromises()
    expect(w.find('[data-test="form"]').exists()).toBe(true)
  })
})

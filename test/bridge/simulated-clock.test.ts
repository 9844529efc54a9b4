import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { epochToTimestamp, spedUpClock } from '../../server/shared/epochs.ts'
import { ALICE, aliceAuth, postMetadata, RECORDED_FILE_INFO, startBridge, startFakeGateway, type TestBridge } from './helpers.ts'

// The default demo pace: 300 epochs per 30 s, anchored at an instant of the first start.
const clock = spedUpClock(1_704_067_200, 300, 1_795_000_000)

describe('the app surface on a sped-up simulated network', () => {
  let gateway: Awaited<ReturnType<typeof startFakeGateway>>
  let t: TestBridge

  beforeAll(async () => {
    gateway = await startFakeGateway((app) => app.post('/file-info', (_req, res) => res.json(RECORDED_FILE_INFO)))
    t = await startBridge(gateway.url, { network: 'simnet' }, { simnetClock: clock })
  })
  afterAll(async () => {
    await t.close()
    await gateway.close()
  })

  it("dates expirations on the simulated chain's clock: the wall-clock moment its head reaches the end epoch", async () => {
    const res = await postMetadata({ url: t.url, body: { filePath: '/docs/report.pdf' } })
    expect(res.status).toBe(200)
    const details = res.body.metadata.file.details
    expect(details.expirationEpoch).toBe(4_500_000)
    expect(details.expirationTimestamp).toBe(epochToTimestamp(clock, 4_500_000))
    // 4.5 M epochs at 0.1 s each from the moved genesis: days from the anchor, not the years real time would give.
    expect(details.expirationTimestamp - 1_795_000_000).toBeLessThan(2 * 86_400)
  })

  it('gives the tab the clock and the pace in words', async () => {
    const res = await fetch(`${t.url}/ocs/v2.php/apps/gateway/config`, { headers: { authorization: aliceAuth, 'ocs-apirequest': 'true' } })
    expect(await res.json()).toEqual({
      success: true,
      config: {
        network: 'simnet',
        ipfsGateway: 'https://ipfs.io',
        genesisTimestamp: clock.genesis,
        epochSeconds: 0.1,
        speed: '1 minute ≈ 5 hours',
      },
    })
  })

  it('names the simulated network and its pace at the top of the preview page', async () => {
    const login = await fetch(`${t.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user: ALICE.user, password: ALICE.password }),
      redirect: 'manual',
    })
    const cookie = /gateway_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0]
    const page = await (await fetch(`${t.url}/`, { headers: { cookie } })).text()
    expect(page).toContain(
      '<span class="preview-header__network" data-test="network" title="Simulated network, 1 minute ≈ 5 hours">Simulated network, 1 minute ≈ 5 hours</span>',
    )
  })
})

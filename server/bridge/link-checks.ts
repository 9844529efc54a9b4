/**
 * The link test's verdicts, one per thing a deployment needs, each with one
 * sentence that says what is wrong and what to do: the bridge reaching the
 * gateway, and each storage route's funds as the gateway's POST /status
 * reports them. (The other direction, the browser reaching the bridge's OCS
 * route, can only be seen from the browser: the admin page adds it.)
 */
import type { LinkCheck, LinkTestResult } from '../shared/contracts/admin-settings.ts'
import type { DealMarketStanding, OnchainCloudStanding } from '../shared/contracts/gateway-status.ts'
import { fundedUntilOfStatus, fundedUntilWords } from '../shared/funded-until.ts'

/** Server → gateway, from what the probe found. */
export function gatewayCheck(url: string, timeoutMs: number, result: Pick<LinkTestResult, 'success' | 'status' | 'message'>): LinkCheck {
  const where = url || 'the gateway'
  const fail = (sentence: string): LinkCheck => ({ id: 'server-gateway', ok: false, sentence })
  if (result.success)
    return { id: 'server-gateway', ok: true, sentence: `The bridge reaches the gateway at ${where} with these credentials.` }
  if (!url) return fail('No gateway URL is set: enter it above, or set GATEWAY_URL where the bridge runs.')
  if (result.status === 0 && result.message.startsWith('No answer within')) {
    return fail(
      `The gateway at ${where} did not answer within ${timeoutMs} ms: check that it runs and that the bridge's host can reach it.`,
    )
  }
  if (result.status === 0) {
    return fail(
      `The bridge could not connect to ${where} (${result.message.replace(/^Could not connect: /, '')}): start the gateway or correct the URL.`,
    )
  }
  if (result.status === 401 || result.status === 403) {
    return fail("The gateway refused the credentials: set the user and password to the gateway's GATEWAY_USER and GATEWAY_PASSWORD.")
  }
  if (result.status >= 300 && result.status < 400) return fail(`${result.message}.`)
  return fail(
    `${where} answered HTTP ${result.status} but is not a gateway: point the URL at the gateway itself, not at Nextcloud or a proxy page.`,
  )
}

const amount = (s: string) => Number(s)

/** Each route the gateway stores on, and whether its funds pay for more. */
export function fundsChecks(routes: { onchainCloud?: OnchainCloudStanding; dealMarket?: DealMarketStanding }): LinkCheck[] {
  const checks: LinkCheck[] = []
  const cloud = routes.onchainCloud
  if (cloud) {
    // The gateway's one 'funded until' (server/shared/funded-until.ts), in the words the tab and the CLI use.
    const until = fundedUntilWords(fundedUntilOfStatus(cloud.fundedUntil, cloud.fundedDays))
    checks.push(
      cloud.status === 'HEALTHY'
        ? {
            id: 'funds-onchain-cloud',
            ok: true,
            sentence: `Filecoin Onchain Cloud is paid for until ${until}, with ${cloud.funds} USDFC deposited.`,
          }
        : cloud.status === 'WARNING'
          ? {
              id: 'funds-onchain-cloud',
              ok: false,
              sentence: `Filecoin Onchain Cloud is paid for only until ${until}: deposit USDFC into Filecoin Pay for the gateway's wallet before then.`,
            }
          : {
              id: 'funds-onchain-cloud',
              ok: false,
              sentence: `Filecoin Onchain Cloud's ${cloud.funds} USDFC no longer pay for what is stored: deposit USDFC into Filecoin Pay for the gateway's wallet now.`,
            },
    )
  }
  const market = routes.dealMarket
  if (market) {
    const free = amount(market.escrow) - amount(market.locked)
    const dataCap = market.dataCap === null ? 0 : Number(market.dataCap)
    checks.push(
      free > 0 || dataCap > 0
        ? {
            id: 'funds-market',
            ok: true,
            sentence: `The deal market has ${free > 0 ? `${free} FIL free in escrow` : 'no free escrow'}${dataCap > 0 ? ` and ${market.dataCap} bytes of DataCap` : ''}.`,
          }
        : {
            id: 'funds-market',
            ok: false,
            sentence: `The deal market has no DataCap and no free escrow (${market.escrow} FIL, ${market.locked} locked): add escrow on the gateway with "npm run wallet -- add-escrow <FIL>".`,
          },
    )
  }
  return checks
}

import type { LinkTestResult } from '../shared/contracts/admin-settings.ts'
import type { GatewayDealKind, GatewayRoutePlan } from '../shared/contracts/gateway-status.ts'
import { askGatewayStatus, gatewayHeaders, readCapped } from './gateway-status.ts'
import { fundsChecks, gatewayCheck } from './link-checks.ts'
import type { EffectiveLink } from './settings-store.ts'

// A path nobody stores: a cheap question every gateway answers with "not found"
// (asking about `/` would make a real gateway aggregate its whole tree).
const PROBE_PATH = '/.gateway-link-test'

/**
 * Asks the gateway `POST /file-info` for a probe path with the link's
 * credentials and says what came back; once that works, adds what its
 * `POST /status` says, then one check per need (link-checks.ts). Never
 * throws: every outcome is a result.
 */
export async function testGatewayLink(link: EffectiveLink): Promise<LinkTestResult> {
  const result = await probeGateway(link)
  return { ...result, checks: [gatewayCheck(link.url, link.timeoutMs, result), ...fundsChecks(result)] }
}

async function probeGateway(link: EffectiveLink): Promise<LinkTestResult> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  if (!link.url) return { success: false, status: 0, message: 'No gateway URL is configured', latencyMs: 0 }
  // The same credentials for the probe and for the status.
  const asked = gatewayHeaders(link)
  let res: Response
  let text: string
  try {
    res = await fetch(`${link.url.replace(/\/+$/, '')}/file-info`, {
      method: 'POST',
      headers: { ...asked, 'content-type': 'application/json' },
      body: JSON.stringify({ filePath: PROBE_PATH }),
      redirect: 'manual',
      signal: AbortSignal.timeout(link.timeoutMs),
    })
    text = (await readCapped(res)).text
  } catch (err) {
    const name = (err as { name?: string }).name
    if (name === 'TimeoutError' || name === 'AbortError') {
      return { success: false, status: 0, message: `No answer within ${link.timeoutMs} ms`, latencyMs: elapsed() }
    }
    return { success: false, status: 0, message: `Could not connect: ${connectProblem(err)}`, latencyMs: elapsed() }
  }
  const latencyMs = elapsed()
  const status = res.status
  if (status === 401 || status === 403) return { success: false, status, message: 'The gateway refused the credentials', latencyMs }
  if (status >= 300 && status < 400)
    return {
      success: false,
      status,
      message: `The gateway redirects to ${res.headers.get('location') ?? 'another address'}; use that address`,
      latencyMs,
    }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return { success: false, status, message: `Not a gateway: POST /file-info answered ${status} with a body that is not JSON`, latencyMs }
  }
  const envelope = typeof body === 'object' && body !== null && typeof (body as { success?: unknown }).success === 'boolean'
  if (!envelope || (status !== 200 && status !== 404)) {
    return { success: false, status, message: `Not a gateway: POST /file-info answered ${status} without a file-info envelope`, latencyMs }
  }
  return {
    success: true,
    status,
    message: 'The gateway answered and accepted the credentials',
    latencyMs,
    ...(await statusExtras(link, asked)),
  }
}

type StatusExtras = Pick<LinkTestResult, 'warning' | 'dealsWarning' | 'dealKind' | 'onchainCloud' | 'dealMarket' | 'nextGroup'>

/**
 * What the gateway's `POST /status` adds to a working link: a network other
 * than the settings', why no deals are proposed, which ones, and what pays
 * for each route. A gateway without the route (CIDgravity's answers 404 or
 * a page), or with an answer that is not the contract's, adds nothing.
 */
async function statusExtras(link: EffectiveLink, headers: Record<string, string>): Promise<StatusExtras> {
  // Unreachable, slow, or not the contract: the link itself was already shown to work.
  const status = await askGatewayStatus(link, headers)
  if (!status) return {}
  const { network, deals, routes, nextGroup } = status
  return {
    // A gateway that says which network it serves is checked against the settings; one that does not is trusted.
    ...(network && network !== link.network
      ? {
          warning: `The gateway serves the ${network} network, but these settings say ${link.network}: dates and explorer links would be wrong`,
        }
      : {}),
    ...(deals.blockedReason ? { dealsWarning: `The gateway proposes no deals: ${deals.blockedReason.slice(0, 500)}` } : {}),
    ...(deals.kind ? { dealKind: `The gateway proposes ${describeDealKind(deals.kind).slice(0, 500)}` } : {}),
    ...(routes.onchainCloud ? { onchainCloud: routes.onchainCloud } : {}),
    ...(routes.market ? { dealMarket: routes.market } : {}),
    ...(nextGroup ? { nextGroup: nextGroup.map(describePlan) } : {}),
  }
}

const ROUTE_WORDS: Record<GatewayRoutePlan['route'], string> = {
  market: 'the deal market',
  onchainCloud: 'Filecoin Onchain Cloud (PDP)',
}

/** One route's plan for the next group as the admin page lists it: the route, its copies, the most a copy costs, why. */
function describePlan(plan: GatewayRoutePlan): NonNullable<LinkTestResult['nextGroup']>[number] {
  const usd = plan.maxPricePerTiBMonthUsd === undefined ? '' : ` (about ${plan.maxPricePerTiBMonthUsd} USD)`
  return {
    route: ROUTE_WORDS[plan.route],
    copies: plan.copies,
    ...(plan.maxPricePerTiBMonth === undefined ? {} : { price: `at most ${plan.maxPricePerTiBMonth} FIL per TiB-month${usd}` }),
    why: plan.why.slice(0, 500),
  }
}

/** The deal kind in a line, as the admin page shows it after "The gateway proposes". */
function describeDealKind(kind: GatewayDealKind): string {
  if (kind.verified) return 'verified (Fil+): each deal uses DataCap'
  return kind.note ? `unverified: ${kind.note}` : 'unverified (DEAL_VERIFIED=false)'
}

/** undici hides the reason in `cause` (ECONNREFUSED, ENOTFOUND, certificate errors...). */
function connectProblem(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : 'unknown error')
}

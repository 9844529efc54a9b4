import { z } from 'zod'

/** What the gateway asks the deal service for a piece. */
export interface ProviderQuery {
  /** Unset: any provider that could take such a deal, whatever the piece's onboarding so far. */
  pieceCid?: string
  transferSize: number
  duration: number
  storagePricePerEpoch: string
  verifiedDeal: boolean
  startEpochHeadOffset: number
}

export interface DealServiceClient {
  bestProviders(query: ProviderQuery): Promise<{ providers: string[]; reason?: string }>
  /** Copies the tenant's onboarding policy asks for (groups plus the mix group). */
  requiredCopies(): Promise<number>
  /**
   * The providers the policy's groups name: on a Lotus node (whose chain lists no
   * providers to pick from) the only ones any piece is offered to. Absent: unknown.
   */
  policyProviders?(): Promise<string[]>
  /** The price of a FIL in USD from the deal service's ticker (volume-weighted over the exchanges); undefined when it has no fresh quote. */
  filUsd(): Promise<number | undefined>
}

export class DealServiceUnavailable extends Error {
  override name = 'DealServiceUnavailable'
  readonly code = 'DEAL_SERVICE_UNAVAILABLE'
}

const BestProvidersAnswer = z.object({
  result: z.object({ providers: z.array(z.string()), reason: z.string().optional() }),
})
/** The ticker's answer (service/ticker/index.ts byPair): a weighted price of 0 means no exchange answered lately. */
const PairAnswer = z.object({ pair: z.string(), weightedPrice: z.number().min(0) })
const PolicyAnswer = z.object({
  result: z.object({
    mixGroup: z.object({ numberOfCopies: z.number().int().min(0) }),
    groups: z.array(
      z.object({
        numberOfCopies: z.number().int().min(0),
        providers: z.array(z.object({ addressId: z.string() })).default([]),
      }),
    ),
  }),
})

/** The deal service over HTTP with the tenant's X-API-KEY. Every failure is a DealServiceUnavailable. */
export function createDealServiceClient(o: {
  url: string
  apiKey: string
  timeoutMs?: number
  policyTtlMs?: number
  fetch?: typeof fetch
}): DealServiceClient {
  const doFetch = o.fetch ?? fetch
  const timeoutMs = o.timeoutMs ?? 10_000
  // The engine ticks every few seconds; the policy changes rarely. A change reaches the gateway within this time.
  const policyTtlMs = o.policyTtlMs ?? 60_000
  let policy: { copies: number; providers: string[]; at: number } | undefined

  async function post<T>(path: string, body: unknown, schema: z.ZodType<T>): Promise<T> {
    let res: Response
    try {
      res = await doFetch(`${o.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-KEY': o.apiKey },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      })
    } catch (err) {
      throw new DealServiceUnavailable(`Deal service unreachable: ${(err as Error).message}`)
    }
    const text = await res.text().catch(() => '')
    if (res.status !== 200) throw new DealServiceUnavailable(`Deal service answered ${res.status} on ${path}`)
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new DealServiceUnavailable(`Deal service sent invalid JSON on ${path}`)
    }
    const parsed = schema.safeParse(json)
    if (!parsed.success) throw new DealServiceUnavailable(`Deal service sent an unexpected answer on ${path}`)
    return parsed.data
  }

  async function readPolicy(): Promise<{ copies: number; providers: string[] }> {
    if (policy && Date.now() - policy.at < policyTtlMs) return policy
    const { result } = await post('/private/v1/onboarding-policy/export', {}, PolicyAnswer)
    const copies = result.mixGroup.numberOfCopies + result.groups.reduce((n, g) => n + g.numberOfCopies, 0)
    const providers = [...new Set(result.groups.filter((g) => g.numberOfCopies > 0).flatMap((g) => g.providers.map((p) => p.addressId)))]
    policy = { copies, providers, at: Date.now() }
    return policy
  }

  return {
    async bestProviders(query) {
      const answer = await post(
        '/private/v1/get-best-available-providers',
        { ...query, transferType: 'http', removeUnsealedCopy: false },
        BestProvidersAnswer,
      )
      return answer.result
    },
    async requiredCopies() {
      return (await readPolicy()).copies
    },
    async policyProviders() {
      return (await readPolicy()).providers
    },
    async filUsd() {
      const answer = await post('/public/v1/ticker/get-latest-by-pair', { pair: 'FIL_USD' }, PairAnswer)
      return answer.weightedPrice > 0 ? answer.weightedPrice : undefined
    },
  }
}

import { z } from 'zod'
import { NETWORK_NAMES } from './network.ts'

/**
 * `POST /status`, what the gateway says about itself: the network it serves,
 * whether it proposes deals and which, and what pays for each storage route's
 * copies. The admin page's "test the link" shows it. An addition of ours:
 * other gateways (CIDgravity's) answer 404, and a link to them works without it.
 *
 * Amounts are decimal strings, never JSON numbers: an 18-decimal token amount
 * does not fit a double. Objects are open, so a client reading this keeps
 * working when fields or routes are added.
 */

/** No field is known yet: an unknown one is a 400, so that a typo is not silently ignored. */
export const GatewayStatusRequestSchema = z.strictObject({})

/** A token amount in whole units with up to 18 decimals, e.g. `12.5`. */
const decimalAmount = z.string().regex(/^\d{1,30}(\.\d{1,18})?$/, 'must be a decimal amount')
/** RFC 3339 as OpenAPI's date-time says it: a reader takes any precision and offset (this gateway writes UTC, in milliseconds). */
const isoTime = z.iso.datetime({ offset: true })

export const GatewayDealKindSchema = z.object({
  verified: z.boolean().describe('Whether new deals are verified (Fil+): each then uses DataCap'),
  networkVersion: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("The chain's network version as the gateway last read it; absent before its first read"),
  note: z
    .string()
    .optional()
    .describe(
      'Why deals are unverified although verified ones were asked for (from network version 29, FIP-0118, there are no verified deals); absent otherwise',
    ),
})

export const GatewayDealsSchema = z.object({
  blocked: z.boolean().describe('Whether the gateway proposes no deal right now for want of funds (no DataCap, no escrow)'),
  blockedReason: z.string().optional().describe('Why, in a sentence; present exactly when blocked'),
  kind: GatewayDealKindSchema.optional().describe('Which deals it proposes now; absent when the gateway makes no deals at all'),
})

export const OnchainCloudStandingSchema = z.object({
  status: z
    .enum(['HEALTHY', 'WARNING', 'DEFICIT'])
    .describe('HEALTHY; WARNING with 14 days or less paid for; DEFICIT when the funds no longer cover what is stored'),
  funds: decimalAmount.describe('USDFC deposited in Filecoin Pay, as a decimal'),
  fundedUntil: isoTime.describe('When the funds run out at the current rate (ISO 8601)'),
  fundedDays: z
    .number()
    .min(0)
    .optional()
    .describe(
      "How many days of the network's own time that is; on a sped-up simulated network many more than the wall clock's days to fundedUntil",
    ),
})

export const DealMarketStandingSchema = z.object({
  dataCap: z
    .string()
    .regex(/^\d{1,30}$/, 'must be a whole number of bytes')
    .nullable()
    .describe('Bytes of DataCap left, as a decimal; null when the client address is not a verified client'),
  escrow: decimalAmount.describe('FIL in the storage market escrow, as a decimal'),
  locked: decimalAmount.describe('FIL of that escrow locked by deals, as a decimal'),
  dealsUntil: isoTime.optional().describe("When the first of the stored data's active deals ends (ISO 8601); absent without active deals"),
})

export const GatewayRoutesSchema = z
  .object({
    market: DealMarketStandingSchema.optional().describe("What pays for deal-market copies: the client address's DataCap and escrow"),
    onchainCloud: OnchainCloudStandingSchema.optional().describe('The Filecoin Onchain Cloud account that pays for PDP copies'),
  })
  .describe('Each storage route the gateway stores on, with its funding; a route it does not use (or has not read yet) is absent')

export const GatewayRoutePlanSchema = z.object({
  route: z
    .enum(['market', 'onchainCloud'])
    .describe('market: deals with storage providers (sealed in sectors); onchainCloud: PDP copies on Filecoin Onchain Cloud'),
  copies: z.number().int().min(0).describe('Copies of the next group this route will make; 0 when it makes none now (why says why)'),
  maxPricePerTiBMonth: decimalAmount
    .optional()
    .describe(
      'The most one copy costs a TiB-month (30 days), in FIL, as a decimal: the price ceiling (DEAL_MAX_PRICE_PER_TIB_MONTH) or DEAL_PRICE; absent when the route does not price in FIL or makes no copies',
    ),
  maxPricePerTiBMonthUsd: decimalAmount
    .optional()
    .describe('The same in USD at the price the gateway worked it out with (its deal service ticker), when it knows one'),
  why: z.string().describe('Which copies, at what price and why, in a sentence'),
})

export const GatewayStatusSchema = z
  .object({
    network: z
      .enum(NETWORK_NAMES)
      .optional()
      .describe("The network the gateway's deals are on, so that whoever links to it can check it is the one they meant"),
    deals: GatewayDealsSchema,
    routes: GatewayRoutesSchema,
    nextGroup: z
      .array(GatewayRoutePlanSchema)
      .optional()
      .describe(
        'Where the next group will be stored: each route with its copies, price per TiB-month and why; absent without a deal engine',
      ),
  })
  .refine((s) => s.deals.blocked === (s.deals.blockedReason !== undefined), {
    message: 'blockedReason is present exactly when blocked',
    path: ['deals', 'blockedReason'],
  })

export const GatewayStatusResponseSchema = z.object({
  success: z.literal(true),
  result: GatewayStatusSchema,
})

export type GatewayDealKind = z.infer<typeof GatewayDealKindSchema>
export type OnchainCloudStanding = z.infer<typeof OnchainCloudStandingSchema>
export type DealMarketStanding = z.infer<typeof DealMarketStandingSchema>
export type GatewayRoutePlan = z.infer<typeof GatewayRoutePlanSchema>
export type GatewayStatus = z.infer<typeof GatewayStatusSchema>
export type GatewayStatusResponse = z.infer<typeof GatewayStatusResponseSchema>

import { EPOCHS_PER_DAY } from './epochs.ts'

/**
 * Deal prices as an admin reads them (FIL or USD per TiB-month) and as the
 * wire carries them (attoFIL per GiB per epoch: a storage ask's Price and
 * VerifiedPrice, boost storagemarket/storedask/storedask.go; a proposal's
 * StoragePricePerEpoch is that × PieceSize / 2^30, piece.ts). A month is 30
 * days of 2880 epochs, as the Onchain Cloud's price list counts it
 * (filecoin-services src/lib/PriceListUSDFC.sol EPOCHS_PER_MONTH), so both
 * routes' prices read in the same unit.
 */
export const EPOCHS_PER_MONTH = 30 * EPOCHS_PER_DAY
const GIB_PER_TIB = 1024n
const ATTO = 10n ** 18n

/** DEAL_MAX_PRICE_PER_TIB_MONTH as given: a decimal amount and its currency (FIL when none is written). */
export interface PriceCeiling {
  /** Decimal, up to 18 places, e.g. `0.5`. */
  amount: string
  currency: 'FIL' | 'USD'
}

const CEILING = /^\s*(\d{1,12}(?:\.\d{1,18})?)\s*(fil|usd)?\s*$/i

/** `0.5`, `0.5FIL`, `0.5 fil`, `3USD`: the ceiling, or undefined when the text is none of these. */
export function parsePriceCeiling(text: string): PriceCeiling | undefined {
  const m = CEILING.exec(text)
  if (!m) return undefined
  return { amount: m[1], currency: (m[2]?.toUpperCase() ?? 'FIL') as PriceCeiling['currency'] }
}

/** A decimal with up to 18 places as an integer of 10^-18 units (attoFIL for FIL). */
export function toAtto(decimal: string): bigint {
  const [whole, fraction = ''] = decimal.split('.')
  return BigInt(whole) * ATTO + BigInt(fraction.padEnd(18, '0').slice(0, 18))
}

/** An integer of 10^-18 units as a short decimal: `500000000000000000n` → `0.5`. */
export function fromAtto(atto: bigint, places = 18): string {
  const whole = atto / ATTO
  const fraction = (atto % ATTO).toString().padStart(18, '0').slice(0, places).replace(/0+$/, '')
  return fraction ? `${whole}.${fraction}` : whole.toString()
}

/** AttoFIL per TiB-month of a price in attoFIL per GiB per epoch. */
export const perTiBMonth = (perGiBEpoch: bigint): bigint => perGiBEpoch * GIB_PER_TIB * BigInt(EPOCHS_PER_MONTH)

/**
 * The highest price per GiB per epoch (whole attoFIL) that is not above a
 * price per TiB-month: an ask at or under it costs at most that a TiB-month.
 */
export const perGiBEpochAtMost = (attoPerTiBMonth: bigint): bigint => attoPerTiBMonth / (GIB_PER_TIB * BigInt(EPOCHS_PER_MONTH))

/**
 * The ceiling in attoFIL per TiB-month: FIL as it is, USD through a FIL
 * price in USD (the deal service's ticker); undefined when that price is
 * not known (no fresh quote: 0 or less).
 */
export function ceilingInAttoFil(c: PriceCeiling, filUsd?: number): bigint | undefined {
  if (c.currency === 'FIL') return toAtto(c.amount)
  if (filUsd === undefined || !Number.isFinite(filUsd) || filUsd <= 0) return undefined
  // USD × 10^18 / (USD per FIL, 9 places kept) → attoFIL.
  const usdPerFilNano = BigInt(Math.round(filUsd * 1e9))
  if (usdPerFilNano === 0n) return undefined
  return (toAtto(c.amount) * 10n ** 9n) / usdPerFilNano
}

/** A price per TiB-month in words: `0.0044 FIL per TiB-month`, with its USD value when the FIL price is known. */
export function describePerTiBMonth(attoFil: bigint, filUsd?: number): string {
  const fil = `${fromAtto(attoFil, 6) === '0' && attoFil > 0n ? fromAtto(attoFil) : fromAtto(attoFil, 6)} FIL per TiB-month`
  if (filUsd === undefined || !(filUsd > 0)) return fil
  const usd = (Number(attoFil) / 1e18) * filUsd
  return `${fil} (about ${usd < 0.01 && usd > 0 ? usd.toPrecision(2) : usd.toFixed(2)} USD)`
}

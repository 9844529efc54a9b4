import type { Sql } from '../../shared/sql/index.ts'
import type { DealStore } from './types.ts'

/**
 * The PDP storage prices the warm storage service published, as each funding estimate read them: a row when they
 * change, so that `npm run deals -- usage` prices the PDP copies without asking the chain.
 */
export function createPdpRates(sql: Sql, now: () => number): Pick<DealStore, 'recordPdpRates' | 'pdpRates'> {
  const last = async () => {
    const r = await sql.get<{ storage_per_tib_per_month: string; dataset_fee_per_month: string; seen_ms: number }>(
      'SELECT storage_per_tib_per_month, dataset_fee_per_month, seen_ms FROM pdp_rates ORDER BY seen_ms DESC LIMIT 1',
    )
    return (
      r && {
        storagePerTibPerMonth: BigInt(r.storage_per_tib_per_month),
        datasetFeePerMonth: BigInt(r.dataset_fee_per_month),
        seenMs: Number(r.seen_ms),
      }
    )
  }
  /** The rates kept last, as text: every estimate hands them in, and only a change is written. */
  let kept: string | undefined
  return {
    async recordPdpRates(rates) {
      const key = `${rates.storagePerTibPerMonth}/${rates.datasetFeePerMonth}`
      if (kept === undefined) {
        const l = await last()
        kept = l && `${l.storagePerTibPerMonth}/${l.datasetFeePerMonth}`
      }
      if (key === kept) return
      await sql.run('INSERT INTO pdp_rates (storage_per_tib_per_month, dataset_fee_per_month, seen_ms) VALUES (?, ?, ?)', [
        rates.storagePerTibPerMonth.toString(),
        rates.datasetFeePerMonth.toString(),
        now(),
      ])
      kept = key
    },
    pdpRates: last,
  }
}

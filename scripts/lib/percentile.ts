/** The `q` quantile (0.5, 0.99) of `values`, by the nearest rank below; `values` is left as it is. */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

import { createHash } from 'node:crypto'

/**
 * Deterministic randomness: the same seed and labels always give the same
 * number, so the simulated network is reproducible without keeping state.
 */
export function seededRandom(seed: string): (...labels: (string | number)[]) => number {
  return (...labels) => {
    const digest = createHash('sha256').update(seed).update('\0').update(labels.join('\0')).digest()
    // 48 bits are plenty for a float in [0, 1).
    return digest.readUIntBE(0, 6) / 2 ** 48
  }
}

/** An integer in [min, max] drawn from a [0,1) number. */
export function between(r: number, min: number, max: number): number {
  return min + Math.floor(r * (max - min + 1))
}

export function pick<T>(r: number, items: readonly T[]): T {
  return items[Math.min(items.length - 1, Math.floor(r * items.length))]
}

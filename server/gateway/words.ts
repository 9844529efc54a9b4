/** Sizes and durations in the words the gateway's reasons use. */

/** A size in bytes as a person reads it: "125 bytes", "4.0 MiB", "64 MiB". */
export function bytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  let v = n
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return i === 0 ? `${n} bytes` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`
}

/** Epochs from now in wall-clock time ("in about 2 days"; minutes on a sped-up simulated network). */
export function inWallTime(epochs: number, epochSeconds: number): string {
  if (epochs <= 0) return 'any moment now'
  const seconds = epochs * epochSeconds
  const [value, unit] =
    seconds < 90
      ? [seconds, 'second']
      : seconds < 3600
        ? [seconds / 60, 'minute']
        : seconds < 2 * 86_400
          ? [seconds / 3600, 'hour']
          : [seconds / 86_400, 'day']
  const n = Math.max(1, Math.round(value))
  return `in about ${n} ${unit}${n === 1 ? '' : 's'}`
}

/** "1 copy", "2 copies": a count with its noun, singular or plural. */
export const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** An inclusive byte range, as HTTP and the content store count it. */
export interface ByteRange {
  start: number
  end: number
}

/**
 * Parses a single-range `Range: bytes=...` header against a file of `size`
 * bytes. Returns undefined when the header should be ignored (absent, not
 * bytes, several ranges: we then send the whole file, which RFC 9110 allows),
 * or 'unsatisfiable' for a 416.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header)
  if (!m) return undefined
  const [, a, b] = m
  if (a === '' && b === '') return undefined
  if (a === '') {
    // Suffix range: the last N bytes.
    const n = Number(b)
    if (n === 0 || size === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - n), end: size - 1 }
  }
  const start = Number(a)
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1)
  if (b !== '' && Number(b) < start) return undefined // invalid range: ignore the header
  if (start >= size) return 'unsatisfiable'
  return { start, end }
}

/**
 * Whether an `Accept-Encoding` header takes gzip (RFC 9110 §12.5.3): named,
 * or `*`, with a weight above zero. No header takes only the identity.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false
  let star = false
  for (const part of header.split(',')) {
    const [coding = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase())
    const q = params.find((p) => p.startsWith('q='))
    const weighted = q === undefined || Number(q.slice(2)) > 0
    // A named gzip decides, whatever `*` says.
    if (coding === 'gzip' || coding === 'x-gzip') return weighted
    if (coding === '*') star = weighted
  }
  return star
}

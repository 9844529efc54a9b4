import { isIP } from 'node:net'

/**
 * Why a provider on the internet could not fetch CARs from `url`, or null
 * when it could: it must be http(s) and name a host that is not loopback,
 * private, link-local or unspecified. Host names other than `localhost` (and
 * `.local`/`.internal`) are taken as public, since resolving them here says
 * nothing of how providers resolve them.
 */
export function whyNotPublic(url: string | undefined): string | null {
  if (!url) return 'GATEWAY_PUBLIC_URL is not set'
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `GATEWAY_PUBLIC_URL (${url}) is not a URL`
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `GATEWAY_PUBLIC_URL (${url}) must be http or https`
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal'))
    return `GATEWAY_PUBLIC_URL (${url}) names a local host`
  const kind = isIP(host)
  if (kind === 4 && isPrivateV4(host)) return `GATEWAY_PUBLIC_URL (${url}) is a loopback or private address`
  if (kind === 6 && isPrivateV6(host)) return `GATEWAY_PUBLIC_URL (${url}) is a loopback or private address`
  return null
}

function isPrivateV4(ip: string): boolean {
  const [a, b] = ip.split('.').map(Number)
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127)
  )
}

function isPrivateV6(ip: string): boolean {
  if (ip === '::' || ip === '::1') return true
  // IPv4-mapped (::ffff:a.b.c.d, which URL writes as ::ffff:XXXX:XXXX).
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(ip)
  if (mapped) {
    const [hi, lo] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)]
    return isPrivateV4(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`)
  }
  const first = parseInt(ip.split(':')[0] || '0', 16)
  // fc00::/7 unique local, fe80::/10 link-local.
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80
}

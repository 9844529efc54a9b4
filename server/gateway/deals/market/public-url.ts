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

/** Whether a host name or address is this machine's loopback (or unspecified: no one can dial 0.0.0.0). */
function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (h === 'localhost' || h.endsWith('.localhost') || h === '::1' || h === '::' || h === '0.0.0.0') return true
  return isIP(h) === 4 && h.startsWith('127.')
}

/** The host a provider's multiaddr dials (`/ip4/…`, `/ip6/…`, `/dns/…`, `/dns4/…`, `/dns6/…`), or null for another kind. */
function multiaddrHost(address: string): string | null {
  return /^\/(?:ip4|ip6|dns|dns4|dns6)\/([^/]+)/.exec(address)?.[1] ?? null
}

/**
 * Why providers could not fetch CARs from `url`, or null when they may: a
 * loopback transfer URL only serves providers on this machine, so it is
 * refused as soon as one provider publishes an address that is not loopback
 * (a docker devnet's `/dns/boost/tcp/50000` or `/dns/curio/tcp/12310/ws`,
 * which the gateway dials, while the container cannot reach the host's
 * 127.0.0.1). `providers` are miner ids with the addresses their miner info publishes.
 */
export function whyProvidersCannotFetch(url: string, providers: { id: string; multiaddrs: string[] }[]): string | null {
  let host: string
  try {
    host = new URL(url).hostname
  } catch {
    return `the transfer URL (${url}) is not a URL`
  }
  if (!isLoopbackHost(host)) return null
  for (const p of providers) {
    const remote = p.multiaddrs.find((a) => {
      const h = multiaddrHost(a)
      return h !== null && !isLoopbackHost(h)
    })
    if (remote) {
      return `the transfer URL ${url} is this machine's loopback, but provider ${p.id} listens at ${remote} and would fetch CARs from its own; set GATEWAY_PUBLIC_URL to an address of this gateway the provider reaches (for a docker devnet: the host's address on its docker network, the Gateway that \`docker network inspect\` shows, with HOST=0.0.0.0 or that address)`
    }
  }
  return null
}

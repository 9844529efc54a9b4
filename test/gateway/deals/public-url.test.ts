import { describe, expect, it } from 'vitest'
import { whyNotPublic, whyProvidersCannotFetch } from '../../../server/gateway/deals/market/public-url.ts'

describe('GATEWAY_PUBLIC_URL on a real network', () => {
  it.each([
    [undefined, /not set/],
    ['gateway.example.org', /not a URL/],
    ['ftp://gateway.example.org', /http or https/],
    ['http://localhost:9011', /local host/],
    ['http://nas.local:9011', /local host/],
    ['http://127.0.0.1:9011', /loopback or private/],
    ['http://10.1.2.3', /loopback or private/],
    ['http://172.20.0.5', /loopback or private/],
    ['http://192.168.1.10:9011', /loopback or private/],
    ['http://169.254.10.1', /loopback or private/],
    ['http://100.64.0.1', /loopback or private/],
    ['http://0.0.0.0:9011', /loopback or private/],
    ['http://[::1]:9011', /loopback or private/],
    ['http://[fd00::5]', /loopback or private/],
    ['http://[fe80::1]', /loopback or private/],
    ['http://[::ffff:192.168.0.1]', /loopback or private/],
  ])('refuses %s', (url, why) => {
    expect(whyNotPublic(url)).toMatch(why)
  })

  it.each(['https://gateway.example.org', 'http://203.0.113.7:9011', 'https://[2001:db8::1]', 'http://172.32.0.1'])('takes %s', (url) => {
    expect(whyNotPublic(url)).toBeNull()
  })
})

describe("a devnet's transfer URL and its providers' addresses", () => {
  const boost = { id: 't01000', multiaddrs: ['/dns/boost/tcp/50000'] }
  const curio = { id: 't01001', multiaddrs: ['/dns/curio/tcp/12310/ws'] }
  const local = { id: 't01002', multiaddrs: ['/dns4/localhost/tcp/4001', '/ip4/127.0.0.1/tcp/4002'] }

  it.each([
    ['http://127.0.0.1:9011', boost],
    ['http://localhost:9011', curio],
    ['http://[::1]:9011', { id: 't01003', multiaddrs: ['/ip4/172.20.0.4/tcp/50000'] }],
    ['http://0.0.0.0:9011', boost],
  ])('refuses the loopback %s while a provider listens elsewhere', (url, provider) => {
    const why = whyProvidersCannotFetch(url, [local, provider])
    expect(why).toContain(`provider ${provider.id} listens at ${provider.multiaddrs[0]}`)
    expect(why).toContain('set GATEWAY_PUBLIC_URL')
  })

  it('takes a loopback URL when every provider is on this machine, and any other URL whatever they are', () => {
    expect(whyProvidersCannotFetch('http://127.0.0.1:9011', [local, { id: 't01004', multiaddrs: [] }])).toBeNull()
    expect(whyProvidersCannotFetch('http://172.20.0.1:9011', [boost, curio, local])).toBeNull()
    expect(whyProvidersCannotFetch('http://host.docker.internal:9011', [boost])).toBeNull()
  })
})

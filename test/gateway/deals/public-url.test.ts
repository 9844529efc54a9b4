import { describe, expect, it } from 'vitest'
import { whyNotPublic } from '../../../server/gateway/deals/market/public-url.ts'

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

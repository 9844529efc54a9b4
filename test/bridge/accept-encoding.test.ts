/** Which `Accept-Encoding` headers take a gzipped answer (RFC 9110 §12.5.3). */
import { describe, expect, it } from 'vitest'
import { acceptsGzip } from '../../server/bridge/accept-encoding.ts'

describe('acceptsGzip', () => {
  it.each([
    ['gzip, deflate, br', true],
    ['GZIP', true],
    ['br;q=1.0, gzip;q=0.8', true],
    ['x-gzip', true],
    ['*', true],
    ['gzip;q=0, *', false],
    ['*;q=0, gzip', true],
    ['*;q=0', false],
    ['br, deflate', false],
    ['identity', false],
    ['', false],
    [undefined, false],
  ])('%j → %s', (header, taken) => {
    expect(acceptsGzip(header)).toBe(taken)
  })
})

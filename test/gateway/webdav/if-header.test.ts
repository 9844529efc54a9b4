import { describe, expect, it } from 'vitest'
import { DavError } from '../../../server/gateway/webdav/errors.ts'
import { listHolds, parseIf, submittedTokens } from '../../../server/gateway/webdav/if-header.ts'

describe('If header parsing', () => {
  it('reads untagged lists with tokens, etags and Not', () => {
    expect(parseIf('(<opaquelocktoken:a> ["e1"]) (Not <DAV:no-lock> ["e2"])')).toEqual([
      {
        tag: undefined,
        conditions: [
          { not: false, token: 'opaquelocktoken:a' },
          { not: false, etag: '"e1"' },
        ],
      },
      {
        tag: undefined,
        conditions: [
          { not: true, token: 'DAV:no-lock' },
          { not: false, etag: '"e2"' },
        ],
      },
    ])
  })

  it('reads tagged lists, several lists per tag', () => {
    expect(parseIf('<http://h/a> (<urn:t1>) (["x"]) </b> (Not["y"])')).toEqual([
      { tag: 'http://h/a', conditions: [{ not: false, token: 'urn:t1' }] },
      { tag: 'http://h/a', conditions: [{ not: false, etag: '"x"' }] },
      { tag: '/b', conditions: [{ not: true, etag: '"y"' }] },
    ])
  })

  it('keeps weak etags and etags with brackets inside quotes', () => {
    expect(parseIf('([W/"a]b"])')[0].conditions).toEqual([{ not: false, etag: 'W/"a]b"' }])
  })

  it.each(['', '()', '(<a>', '<http://h/a>', '(["unterminated)', '(junk)', '(<a>) <http://h/> (<b>)', '<x> (<a>) (<b>) junk'])(
    'refuses %j with a 400',
    (header) => {
      try {
        parseIf(header)
        expect.unreachable()
      } catch (err) {
        expect(err).toBeInstanceOf(DavError)
        expect((err as DavError).status).toBe(400)
      }
    },
  )
})

describe('If header evaluation', () => {
  const state = { etag: '"e1"', lockTokens: new Set(['urn:lock']) }

  it('needs every condition of a list', () => {
    const [list] = parseIf('(<urn:lock> ["e1"])')
    expect(listHolds(list, state)).toBe(true)
    expect(listHolds(list, { ...state, etag: '"e2"' })).toBe(false)
    expect(listHolds(list, { ...state, lockTokens: new Set() })).toBe(false)
  })

  it('negates with Not, and DAV:no-lock never matches', () => {
    expect(listHolds(parseIf('(Not <DAV:no-lock>)')[0], state)).toBe(true)
    expect(listHolds(parseIf('(<DAV:no-lock>)')[0], state)).toBe(false)
    expect(listHolds(parseIf('(Not ["e1"])')[0], state)).toBe(false)
  })

  it('compares etags weakly and never matches a missing resource', () => {
    expect(listHolds(parseIf('([W/"e1"])')[0], state)).toBe(true)
    expect(listHolds(parseIf('(["e1"])')[0], { lockTokens: new Set() })).toBe(false)
  })

  it('submits asserted tokens only', () => {
    expect([...submittedTokens(parseIf('(<urn:a>) (Not <urn:b>) (<urn:c> ["e"])'))]).toEqual(['urn:a', 'urn:c'])
  })
})

import { describe, expect, it } from 'vitest'
import { BridgeError } from '../../server/bridge/errors.ts'
import { normaliseUserPath, splitPath } from '../../server/bridge/user-path.ts'

const strict = (p: string) => normaliseUserPath(p, { encoding: 'url' })
const body = (p: string) => normaliseUserPath(p, { encoding: 'literal', userId: 'alice' })

function statusOf(fn: () => unknown): number | undefined {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError)
    return (err as BridgeError).status
  }
  return undefined
}

describe('normaliseUserPath', () => {
  it.each([
    ['/docs/a.txt', '/docs/a.txt'],
    ['docs/a.txt', '/docs/a.txt'],
    ['/docs//a.txt', '/docs/a.txt'],
    ['//docs///sub//', '/docs/sub'],
    ['/docs/', '/docs'],
    ['/', '/'],
    ['', '/'],
    ['/My%20Docs/r%C3%A9sum%C3%A9.pdf', '/My Docs/résumé.pdf'],
    ['/日本語/ファイル.txt', '/日本語/ファイル.txt'],
    ['/a..b/c...', '/a..b/c...'],
    ['/.hidden', '/.hidden'],
  ])('%j → %j', (raw, expected) => {
    expect(strict(raw)).toBe(expected)
  })

  it.each([
    '/../bob/secret.txt',
    '/docs/../../bob',
    '..',
    '/docs/..',
    '/./a',
    '/%2e%2e/bob',
    '/%2E%2E/bob',
    '/.%2e/bob',
    '/%252e%252e/bob',
    '/docs\\..\\bob',
    '/docs%5c..%5cbob',
    '/a%00b',
    '/a\u0000b',
    '/a%0ab',
    '/a\tb',
    '/a%7fb',
    '/a%2500b',
  ])('refuses %j with 400', (raw) => {
    expect(statusOf(() => strict(raw))).toBe(400)
    if (!LITERAL_NAMES.includes(raw)) expect(statusOf(() => body(raw))).toBe(400)
  })

  // Harmless names when taken literally, as a JSON body's path is: never decoded, so never `..` or a control character.
  const LITERAL_NAMES = ['/%252e%252e/bob', '/a%0ab', '/a%7fb', '/a%2500b']
  it.each(LITERAL_NAMES)('takes %j literally in a JSON body', (raw) => {
    expect(body(raw)).toBe(raw)
  })

  it('refuses over-long paths', () => {
    expect(statusOf(() => strict('/' + 'a'.repeat(5000)))).toBe(400)
  })

  it("is strict about broken escapes in URLs but takes a JSON body's path literally", () => {
    expect(statusOf(() => strict('/100%.txt'))).toBe(400)
    expect(body('/100%.txt')).toBe('/100%.txt')
    expect(body('/100%41.txt')).toBe('/100%41.txt')
    expect(body('/a%2Fb/c%2520d+e #1?.txt')).toBe('/a%2Fb/c%2520d+e #1?.txt')
  })

  it('gives names in NFC, as Nextcloud stores them, whichever form the client sent', () => {
    const nfd = '/Re\u0301sume\u0301.txt'
    expect(body(nfd)).toBe('/R\u00e9sum\u00e9.txt')
    expect(strict(encodeURI(nfd))).toBe('/R\u00e9sum\u00e9.txt')
  })

  it('decodes only once', () => {
    expect(strict('/a%2520b')).toBe('/a%20b')
  })

  it("strips the WebDAV prefix of the user's own files", () => {
    expect(body('/remote.php/dav/files/alice/docs/a.txt')).toBe('/docs/a.txt')
    expect(body('/remote.php/dav/files/alice')).toBe('/')
    expect(body('/remote.php/dav/files/alice/My Docs/a.txt')).toBe('/My Docs/a.txt')
    expect(body('/remote.php/webdav/docs/a.txt')).toBe('/docs/a.txt')
  })

  it("answers 404 for another user's WebDAV prefix", () => {
    expect(statusOf(() => body('/remote.php/dav/files/bob/secret.txt'))).toBe(404)
  })
})

describe('splitPath', () => {
  it.each([
    ['/a/b.txt', ['/a', 'b.txt']],
    ['/b.txt', ['/', 'b.txt']],
    ['/', ['/', '']],
  ])('%s', (path, expected) => {
    expect(splitPath(path)).toEqual(expected)
  })
})

import { createHash } from 'node:crypto'
import { connect } from 'node:net'
import { gzipSync } from 'node:zlib'

/**
 * A deterministic HTTP fuzzer for the stack's three surfaces. Each case is one
 * request written byte for byte on a fresh socket (so paths, headers and
 * bodies can be anything), built from a valid request of an endpoint and one
 * hostile change: missing/wrong-typed/unknown/huge fields, broken JSON or XML,
 * bad encodings, path traversal, junk headers and methods. A case fails when
 * the server answers 5xx, answers nothing before the deadline (a hang), or
 * resets the connection before its answer.
 */

export type Part = 'app' | 'gateway' | 'service'

export interface FuzzTarget {
  part: Part
  url: string
  /** Headers that authenticate a well-behaved caller. */
  auth: Record<string, string>
}

export interface FuzzCase {
  part: Part
  endpoint: string
  mutation: string
  method: string
  /** Raw request target, sent as is. */
  path: string
  headers: [string, string][]
  body?: Buffer
}

export interface FuzzFailure {
  case: FuzzCase
  problem: string
}

export interface FuzzReport {
  requests: number
  byStatus: Record<string, number>
  byPart: Record<Part, number>
  failures: FuzzFailure[]
}

/** A small seeded PRNG (sha256 counter mode): the same seed gives the same cases. */
export function seededRng(seed: string): () => number {
  let counter = 0
  let pool = Buffer.alloc(0)
  return () => {
    if (pool.length < 4) {
      pool = createHash('sha256').update(`${seed}/${counter++}`).digest()
    }
    const v = pool.readUInt32BE(0)
    pool = pool.subarray(4)
    return v / 2 ** 32
  }
}

type Rng = () => number
const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)]

const deep = (n: number, open: string, close: string) => open.repeat(n) + close.repeat(n)
const hugeString = (n: number) => 'x'.repeat(n)

/** Values that break code assuming a field has the right type and shape. */
const HOSTILE_VALUES: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 63,
  '',
  'abc',
  '1.5',
  '-1',
  '0x10',
  'NaN',
  'Infinity',
  '1e400',
  [],
  {},
  [1, 2, 3],
  { a: { b: { c: {} } } },
  '../../../../etc/passwd',
  '/..',
  '%2e%2e/%2e%2e/secret',
  '/a/%00/b',
  'a\u0000b',
  'a\\..\\b',
  '//double//slashes',
  '\u0065\u0301',
  'é',
  '😀'.repeat(100),
  '<script>alert(1)</script>',
  "'; DROP TABLE users; --",
  '__proto__',
  'constructor',
  hugeString(70_000),
  't0123',
  'f01234',
  'f1abc',
  'bafy',
  'baga6ea4seaqnotreally',
]

const FIELD_NAMES = ['__proto__', 'constructor', 'prototype', 'unknownField', 'toString', '$where']

/** One hostile change to a JSON body; returns the body bytes and extra headers. */
function mutateJson(
  rng: Rng,
  template: Record<string, unknown>,
): { mutation: string; body: Buffer; contentType?: string; headers?: [string, string][] } {
  const keys = Object.keys(template)
  const json = (v: unknown) => Buffer.from(JSON.stringify(v))
  const r = rng()
  if (r < 0.12) return { mutation: 'valid', body: json(template) }
  if (r < 0.24 && keys.length > 0) {
    const k = pick(rng, keys)
    const { [k]: _drop, ...rest } = template
    return { mutation: `missing ${k}`, body: json(rest) }
  }
  if (r < 0.5 && keys.length > 0) {
    const k = pick(rng, keys)
    const v = pick(rng, HOSTILE_VALUES)
    return { mutation: `${k}=${JSON.stringify(v)?.slice(0, 40)}`, body: json({ ...template, [k]: v }) }
  }
  if (r < 0.58) {
    const k = pick(rng, FIELD_NAMES)
    // JSON.stringify drops a __proto__ key set through an object literal; write it by hand.
    const text = JSON.stringify(template).replace(
      /^\{/,
      `{${JSON.stringify(k)}:${JSON.stringify(pick(rng, HOSTILE_VALUES))}${keys.length ? ',' : ''}`,
    )
    return { mutation: `unknown field ${k}`, body: Buffer.from(text) }
  }
  const whole: [string, () => { body: Buffer; contentType?: string; headers?: [string, string][] }][] = [
    ['not JSON', () => ({ body: Buffer.from('this is not json') })],
    ['truncated JSON', () => ({ body: json(template).subarray(0, Math.max(1, json(template).length - 3)) })],
    ['JSON array', () => ({ body: json([template]) })],
    ['JSON string', () => ({ body: json('filePath') })],
    ['JSON number', () => ({ body: Buffer.from('12345678901234567890') })],
    ['JSON null', () => ({ body: Buffer.from('null') })],
    ['empty body', () => ({ body: Buffer.alloc(0) })],
    ['2 MiB body', () => ({ body: json({ ...template, pad: hugeString(2 * 1024 * 1024) }) })],
    ['deep nesting', () => ({ body: Buffer.from(deep(20_000, '[', ']')) })],
    ['deep object nesting', () => ({ body: Buffer.from(deep(5_000, '{"a":', '}').replace(/}$/, '1}')) })],
    [
      'invalid UTF-8',
      () => ({ body: Buffer.concat([Buffer.from('{"filePath":"/a'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('"}')]) }),
    ],
    ['UTF-8 BOM', () => ({ body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json(template)]) })],
    ['UTF-16 body', () => ({ body: Buffer.from(JSON.stringify(template), 'utf16le'), contentType: 'application/json; charset=utf-16' })],
    ['latin1 charset', () => ({ body: json(template), contentType: 'application/json; charset=latin1' })],
    ['text/plain', () => ({ body: json(template), contentType: 'text/plain' })],
    ['form encoded', () => ({ body: Buffer.from('filePath=%2Fa.txt'), contentType: 'application/x-www-form-urlencoded' })],
    [
      'multipart',
      () => ({
        body: Buffer.from('--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n'),
        contentType: 'multipart/form-data; boundary=x',
      }),
    ],
    ['no content type', () => ({ body: json(template), contentType: '' })],
    ['gzip body', () => ({ body: gzipSync(json(template)), headers: [['Content-Encoding', 'gzip']] })],
    ['garbage gzip', () => ({ body: Buffer.from('not gzip at all'), headers: [['Content-Encoding', 'gzip']] })],
    ['unknown encoding', () => ({ body: json(template), headers: [['Content-Encoding', 'br, zstd, x-junk']] })],
    ['duplicate keys', () => ({ body: Buffer.from(JSON.stringify(template).replace(/^\{/, '{"filePath":1,"filePath":{},')) })],
  ]
  const [mutation, make] = pick(rng, whole)
  return { mutation, ...make() }
}

const PATH_SEGMENTS = [
  'a.txt',
  'folder',
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '%2e',
  '%00',
  '%ZZ',
  '%',
  '%2F',
  '%5C',
  'a%2Fb',
  '..%2f..%2f',
  '%c0%ae%c0%ae',
  'x'.repeat(300),
  'é',
  'e%CC%81',
  '%F0%9F%98%80',
  'with space',
  'a+b',
  'a#b',
  'a?b=c',
  '~',
  '.htaccess',
  'CON',
  'a\\b',
  '%FF%FE',
  '',
]

function hostilePath(rng: Rng, prefix: string): string {
  const n = 1 + Math.floor(rng() * 4)
  const segments = Array.from({ length: n }, () => pick(rng, PATH_SEGMENTS))
  const r = rng()
  if (r < 0.05) return prefix + 'x'.repeat(9_000)
  if (r < 0.1) return prefix + segments.join('//')
  return prefix + segments.join('/')
}

const XML_BODIES: [string, string][] = [
  ['propfind allprop', '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>'],
  [
    'propfind props',
    '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><d:getetag/><oc:fileid/><oc:permissions/><d:quota-used-bytes/></d:prop></d:propfind>',
  ],
  [
    'proppatch',
    '<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:color>red</x:color></d:prop></d:set></d:propertyupdate>',
  ],
  [
    'lockinfo',
    '<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype><d:owner>fuzz</d:owner></d:lockinfo>',
  ],
  ['broken XML', '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop>'],
  ['not XML', '{"json": "instead"}'],
  [
    'billion laughs',
    '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">]><d:propfind xmlns:d="DAV:"><d:prop><x>&f;</x></d:prop></d:propfind>',
  ],
  [
    'external entity',
    '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><z xmlns="urn:z">&e;</z></d:prop></d:set></d:propertyupdate>',
  ],
  ['deep XML', `<?xml version="1.0"?><d:propfind xmlns:d="DAV:">${deep(20_000, '<a>', '</a>')}</d:propfind>`],
  ['huge XML', `<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop>${'<d:getetag/>'.repeat(150_000)}</d:prop></d:propfind>`],
  ['wrong namespace', '<?xml version="1.0"?><propfind xmlns="urn:not-dav"><allprop/></propfind>'],
  ['empty prop', '<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop/></d:set></d:propertyupdate>'],
]

const DAV_METHODS = [
  'GET',
  'HEAD',
  'PUT',
  'DELETE',
  'MKCOL',
  'PROPFIND',
  'PROPPATCH',
  'COPY',
  'MOVE',
  'LOCK',
  'UNLOCK',
  'OPTIONS',
  'POST',
  'PATCH',
  'SEARCH',
  'REPORT',
  'FOO',
  'TRACE',
]

const DAV_HEADERS: [string, () => string][] = [
  ['Depth', () => '0'],
  ['Depth', () => 'infinity'],
  ['Depth', () => '2'],
  ['Depth', () => 'junk'],
  ['Destination', () => 'http://evil.example/remote.php/dav/files/bob/x'],
  ['Destination', () => 'file:///etc/passwd'],
  ['Destination', () => '%%%'],
  ['Destination', () => '/../../x'],
  ['Overwrite', () => 'X'],
  ['Overwrite', () => 'F'],
  ['If', () => '(<opaquelocktoken:nope>)'],
  ['If', () => '<http://other.example/x> (["etag"])'],
  ['If', () => '(((((('],
  ['If', () => '<file:///etc/passwd> (<urn:x>)'],
  ['Lock-Token', () => 'garbage'],
  ['Lock-Token', () => '<opaquelocktoken:00000000-0000-0000-0000-000000000000>'],
  ['Timeout', () => 'Second-99999999999999999999'],
  ['Timeout', () => 'Infinite, junk'],
  ['Range', () => 'bytes=0-0'],
  ['Range', () => 'bytes=999999999-'],
  ['Range', () => 'bytes=-0'],
  ['Range', () => 'bytes=5-1'],
  ['Range', () => 'bytes=0-1,2-3,4-5'],
  ['Range', () => 'chars=0-1'],
  ['If-Match', () => '"nope"'],
  ['If-None-Match', () => '*'],
  ['If-Modified-Since', () => 'not a date'],
  ['X-OC-Mtime', () => 'yesterday'],
  ['X-OC-Mtime', () => '99999999999999999999'],
  ['OC-Checksum', () => 'SHA1:zz'],
  ['Content-Range', () => 'bytes 0-1/2'],
  ['OC-Total-Length', () => '-5'],
]

const JUNK_HEADERS: [string, () => string][] = [
  ['Origin', () => 'garbage'],
  ['Origin', () => 'null'],
  ['Origin', () => 'http://[::1'],
  ['Referer', () => '::::'],
  ['Cookie', () => 'nc_session_id=' + 'a'.repeat(4000)],
  ['Cookie', () => '=;=;;=='],
  ['requesttoken', () => 'x'],
  ['X-Forwarded-For', () => '1.2.3.4, ::ffff:999.1.1.1, junk'],
  ['X-Forwarded-Proto', () => 'gopher'],
  ['Host', () => 'evil.example'],
  ['Accept', () => '*/*;q=junk'],
  ['Accept-Language', () => 'x'.repeat(2000)],
  ['X-Requested-With', () => 'XMLHttpRequest'],
  ['Transfer-Encoding', () => 'identity'],
  ['Expect', () => '100-continue'],
]

function badAuth(rng: Rng): [string, string][] {
  return pick(rng, [
    [],
    [['Authorization', 'Basic !!!!']],
    [['Authorization', 'Basic ' + Buffer.from('nobody:wrong').toString('base64')]],
    [['Authorization', 'Basic ' + Buffer.from('no-colon').toString('base64')]],
    [['Authorization', 'Basic ' + Buffer.from('\u0000:\u0000').toString('base64')]],
    [['Authorization', 'Bearer ' + 'x'.repeat(3000)]],
    [['Authorization', 'Digest username="x"']],
    [['X-API-KEY', '']],
    [['X-API-KEY', 'wrong-key-' + 'k'.repeat(100)]],
  ] as [string, string][][])
}

interface Endpoint {
  part: Part
  name: string
  method: string
  path: string
  json?: Record<string, unknown>
  headers?: [string, string][]
  /** A WebDAV area: fuzzed with random methods, paths, XML bodies and DAV headers. */
  dav?: string
  form?: Record<string, string>
  /** It relinks what the other endpoints talk to: fuzzed after all of them, so their answers are not about a broken link. */
  last?: true
}

const ENDPOINTS: Endpoint[] = [
  {
    part: 'app',
    name: 'get-file-metadata',
    method: 'POST',
    path: '/ocs/v2.php/apps/gateway/get-file-metadata',
    json: { filePath: '/a.txt' },
    headers: [['OCS-APIRequest', 'true']],
  },
  { part: 'app', name: 'tab config', method: 'GET', path: '/ocs/v2.php/apps/gateway/config', headers: [['OCS-APIRequest', 'true']] },
  {
    part: 'app',
    name: 'admin settings',
    last: true,
    method: 'PUT',
    path: '/ocs/v2.php/apps/gateway/admin/settings',
    json: {
      gatewayUrl: '',
      gatewayUser: '',
      pathMap: '/{user}',
      network: 'mainnet',
      ipfsGateway: 'https://ipfs.io',
      mounts: [{ mountPoint: '/Filecoin', gatewayPath: '/{user}' }],
    },
    headers: [['OCS-APIRequest', 'true']],
  },
  {
    part: 'app',
    name: 'admin settings read',
    method: 'GET',
    path: '/ocs/v2.php/apps/gateway/admin/settings',
    headers: [['OCS-APIRequest', 'true']],
  },
  {
    part: 'app',
    name: 'test link',
    method: 'POST',
    path: '/ocs/v2.php/apps/gateway/admin/test-link',
    json: { gatewayUrl: 'http://127.0.0.1:9/' },
    headers: [['OCS-APIRequest', 'true']],
  },
  { part: 'app', name: 'openapi', method: 'GET', path: '/ocs/v2.php/apps/gateway/openapi.json' },
  { part: 'app', name: 'status', method: 'GET', path: '/status.php' },
  {
    part: 'app',
    name: 'capabilities',
    method: 'GET',
    path: '/ocs/v2.php/cloud/capabilities?format=json',
    headers: [['OCS-APIRequest', 'true']],
  },
  { part: 'app', name: 'cloud user', method: 'GET', path: '/ocs/v1.php/cloud/user', headers: [['OCS-APIRequest', 'true']] },
  { part: 'app', name: 'login', method: 'POST', path: '/login', form: { user: 'admin', password: 'wrong-password' } },
  { part: 'app', name: 'logout', method: 'POST', path: '/logout', form: {} },
  { part: 'app', name: 'csrftoken', method: 'GET', path: '/index.php/csrftoken' },
  { part: 'app', name: 'preview page', method: 'GET', path: '/' },
  { part: 'app', name: 'files area', method: 'PROPFIND', path: '/remote.php/dav/files/admin/', dav: '/remote.php/dav/files/admin/' },
  { part: 'app', name: 'legacy webdav', method: 'PROPFIND', path: '/remote.php/webdav/', dav: '/remote.php/webdav/' },
  { part: 'app', name: 'other user area', method: 'PROPFIND', path: '/remote.php/dav/files/bob/', dav: '/remote.php/dav/files/bob/' },
  {
    part: 'app',
    name: 'uploads',
    method: 'MKCOL',
    path: '/remote.php/dav/uploads/admin/fuzz-upload',
    dav: '/remote.php/dav/uploads/admin/',
  },
  { part: 'gateway', name: 'file-info', method: 'POST', path: '/file-info', json: { filePath: '/admin/a.txt', verbose: true } },
  { part: 'gateway', name: 'gateway webdav', method: 'PROPFIND', path: '/admin/', dav: '/admin/' },
  { part: 'gateway', name: 'deal transfer', method: 'GET', path: '/deal-transfer/1', headers: [['Authorization', 'Bearer nope']] },
  { part: 'service', name: 'ticker latest', method: 'POST', path: '/public/v1/ticker/get-latest', json: {} },
  { part: 'service', name: 'ticker pair', method: 'POST', path: '/public/v1/ticker/get-latest-by-pair', json: { pair: 'FIL/USD' } },
  { part: 'service', name: 'version', method: 'GET', path: '/public/v1/get-version' },
  { part: 'service', name: 'openapi', method: 'GET', path: '/openapi.json' },
  {
    part: 'service',
    name: 'epoch from days',
    method: 'POST',
    path: '/private/v1/get-network-epoch-duration-from-days',
    json: { days: 540 },
  },
  {
    part: 'service',
    name: 'epoch from time',
    method: 'POST',
    path: '/private/v1/get-network-epoch-from-unix-timestamp',
    json: { unixTimestamp: 1_760_000_000_000 },
  },
  {
    part: 'service',
    name: 'on-chain deals',
    method: 'POST',
    path: '/private/v1/get-on-chain-deals',
    json: { sortBy: 'dealId', cursor: '1' },
  },
  {
    part: 'service',
    name: 'availability',
    method: 'POST',
    path: '/private/v1/get-provider-availability',
    json: {
      provider: 'f01234',
      duration: 1_555_200,
      storagePricePerEpoch: '0',
      verifiedDeal: true,
      transferSize: 1048576,
      transferType: 'http',
      removeUnsealedCopy: false,
      startEpochHeadOffset: 5760,
      providerCollateral: '0',
      pieceCid: 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq',
    },
  },
  {
    part: 'service',
    name: 'best providers',
    method: 'POST',
    path: '/private/v1/get-best-available-providers',
    json: {
      duration: 1_555_200,
      storagePricePerEpoch: '0',
      verifiedDeal: true,
      transferSize: 1048576,
      transferType: 'http',
      removeUnsealedCopy: false,
    },
  },
  { part: 'service', name: 'policy export', method: 'POST', path: '/private/v1/onboarding-policy/export', json: {} },
  {
    part: 'service',
    name: 'policy import',
    method: 'POST',
    path: '/private/v1/onboarding-policy/import',
    json: {
      settings: {},
      groups: [{ name: 'g1', numberOfCopies: 1, providers: [{ addressId: 'f01234' }] }],
      mixGroup: { numberOfCopies: 1 },
    },
  },
]

/** The endpoints the fuzzer knows, by part (the report's coverage). */
export const FUZZED_ENDPOINTS = ENDPOINTS.map((e) => `${e.part} ${e.name}`)

/** Builds `count` cases over every endpoint of the given parts, the same ones for the same seed. */
export function* fuzzCases(
  seed: string,
  count: number,
  targets: FuzzTarget[],
  phase: 'first' | 'last' | 'all' = 'all',
): Generator<FuzzCase> {
  const rng = seededRng(`${seed}/${phase}`)
  const byPart = new Map(targets.map((t) => [t.part, t]))
  const endpoints = ENDPOINTS.filter((e) => byPart.has(e.part) && (phase === 'all' || (phase === 'last') === (e.last === true)))
  for (let i = 0; i < count; i++) {
    const e = endpoints[i % endpoints.length]
    const target = byPart.get(e.part)!
    const headers: [string, string][] = []
    // Mostly a well-behaved caller, so the hostile part reaches deep into the handlers.
    const authed = rng() < 0.85
    if (authed) headers.push(...Object.entries(target.auth))
    else headers.push(...badAuth(rng))
    headers.push(...(e.headers ?? []).filter(() => rng() < 0.92))
    if (rng() < 0.15) {
      const [name, value] = pick(rng, JUNK_HEADERS)
      headers.push([name, value()])
    }
    let method = e.method
    let path = e.path
    let body: Buffer | undefined
    let mutation = authed ? '' : 'bad auth; '
    if (e.dav) {
      method = pick(rng, DAV_METHODS)
      path = rng() < 0.8 ? hostilePath(rng, e.dav) : e.dav
      for (let k = 0; k < 1 + Math.floor(rng() * 3); k++) {
        const [name, value] = pick(rng, DAV_HEADERS)
        headers.push([name, value()])
      }
      if (method === 'PUT') body = rng() < 0.1 ? Buffer.alloc(3 * 1024 * 1024, 7) : Buffer.from(`fuzz ${i}\n`)
      else if (['PROPFIND', 'PROPPATCH', 'LOCK'].includes(method) || rng() < 0.1) {
        const [name, xml] = pick(rng, XML_BODIES)
        body = Buffer.from(xml)
        mutation += `${name}; `
        headers.push(['Content-Type', rng() < 0.8 ? 'application/xml; charset=utf-8' : 'text/plain'])
      }
      mutation += `${method} ${path.slice(0, 60)}`
    } else if (e.json) {
      const m = mutateJson(rng, e.json)
      body = m.body
      mutation += m.mutation
      if (m.contentType !== '') headers.push(['Content-Type', m.contentType ?? 'application/json'])
      headers.push(...(m.headers ?? []))
      if (rng() < 0.05) method = pick(rng, ['GET', 'PUT', 'DELETE', 'PATCH'])
    } else if (e.form) {
      const r = rng()
      body =
        r < 0.5
          ? Buffer.from(new URLSearchParams(e.form).toString())
          : r < 0.75
            ? Buffer.from(`user=${'%'.repeat(50)}&password=%ZZ`)
            : Buffer.alloc(100_000, 0x61)
      headers.push(['Content-Type', rng() < 0.8 ? 'application/x-www-form-urlencoded' : 'application/json'])
      mutation += r < 0.5 ? 'form' : r < 0.75 ? 'bad percent-encoding' : 'huge form'
    } else {
      if (rng() < 0.3)
        path += `?${pick(rng, ['format=json', 'format=xml', 'a=%ZZ', 'x'.repeat(5000) + '=1', '__proto__[x]=1', 'format[]=json'])}`
      if (rng() < 0.2) method = pick(rng, ['POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'])
      mutation += `${method} ${path.slice(0, 60)}`
    }
    yield { part: e.part, endpoint: e.name, mutation, method, path, headers, body }
  }
}

/** Writes one case on a fresh socket; resolves with the status, or a problem (reset, timeout). */
export function sendCase(target: FuzzTarget, c: FuzzCase, timeoutMs: number): Promise<{ status?: number; problem?: string }> {
  const url = new URL(target.url)
  const head = [`${c.method} ${c.path} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close']
  for (const [name, value] of c.headers) if (!/^(host|connection)$/i.test(name)) head.push(`${name}: ${value}`)
  head.push(`Content-Length: ${c.body?.length ?? 0}`)
  const bytes = Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n', 'latin1'), c.body ?? Buffer.alloc(0)])
  return new Promise((resolve) => {
    let received = Buffer.alloc(0)
    let settled = false
    const done = (v: { status?: number; problem?: string }) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(v)
    }
    // The final status: interim 1xx answers (100 Continue) are skipped.
    const statusOf = () => {
      const text = received.toString('latin1')
      for (const m of text.matchAll(/(?:^|\r\n\r\n)HTTP\/1\.[01] (\d{3})/g)) if (!m[1].startsWith('1')) return Number(m[1])
      return undefined
    }
    const socket = connect(Number(url.port), url.hostname)
    const timer = setTimeout(
      () => done({ status: statusOf(), problem: statusOf() ? undefined : `no answer within ${timeoutMs} ms` }),
      timeoutMs,
    )
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk])
      // The status line is all we judge; the rest may be long.
      if (statusOf() && received.indexOf('\r\n\r\n', received.lastIndexOf('HTTP/1.')) >= 0) done({ status: statusOf() })
    })
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // Once the answer is read, how the server closes does not matter to the client.
      const status = statusOf()
      done(status ? { status } : { problem: `connection ${err.code ?? err.message} before an answer` })
    })
    socket.on('end', () => done(statusOf() ? { status: statusOf() } : { problem: 'connection closed without an answer' }))
    socket.write(bytes, (err) => {
      // EPIPE/ECONNRESET while writing: judged by what was read (an early 413 is fine).
      if (err && !statusOf())
        setTimeout(
          () =>
            done(
              statusOf() ? { status: statusOf() } : { problem: `write failed (${(err as NodeJS.ErrnoException).code}) before an answer` },
            ),
          200,
        )
    })
  })
}

/** Sends `count` cases, `concurrency` at a time; every 5xx, hang or reset is a failure. */
export async function runFuzz(o: {
  seed: string
  count: number
  targets: FuzzTarget[]
  concurrency?: number
  timeoutMs?: number
  onProgress?: (done: number) => void
}): Promise<FuzzReport> {
  const report: FuzzReport = { requests: 0, byStatus: {}, byPart: { app: 0, gateway: 0, service: 0 }, failures: [] }
  const targets = new Map(o.targets.map((t) => [t.part, t]))
  const run = async (cases: Generator<FuzzCase>) => {
    const worker = async () => {
      for (let next = cases.next(); !next.done; next = cases.next()) {
        const c = next.value
        const r = await sendCase(targets.get(c.part)!, c, o.timeoutMs ?? 15_000)
        report.requests++
        report.byPart[c.part]++
        const key = r.status ? String(r.status) : 'none'
        report.byStatus[key] = (report.byStatus[key] ?? 0) + 1
        if (r.problem) report.failures.push({ case: c, problem: r.problem })
        else if (r.status! >= 500 && !documented5xx(c, r.status!, targets.get(c.part)!.url))
          report.failures.push({ case: c, problem: `answered ${r.status}` })
        if (report.requests % 250 === 0) o.onProgress?.(report.requests)
      }
    }
    await Promise.all(Array.from({ length: o.concurrency ?? 8 }, worker))
  }
  // Endpoints marked `last` get their share of the requests once every other one is done.
  const fuzzed = ENDPOINTS.filter((e) => targets.has(e.part))
  const lastCount = Math.round((o.count * fuzzed.filter((e) => e.last).length) / fuzzed.length)
  await run(fuzzCases(o.seed, o.count - lastCount, o.targets, 'first'))
  await run(fuzzCases(o.seed, lastCount, o.targets, 'last'))
  return report
}

/**
 * A COPY or MOVE whose Destination is on another server answers 502: RFC 4918
 * §9.8.5 and §9.9.4 name that status for exactly this case (Apache mod_dav does the same).
 */
function documented5xx(c: FuzzCase, status: number, targetUrl: string): boolean {
  if (status !== 502 || (c.method !== 'COPY' && c.method !== 'MOVE')) return false
  const destination = c.headers.find(([n]) => n.toLowerCase() === 'destination')?.[1]
  if (!destination || !URL.canParse(destination)) return false
  return new URL(destination).host !== new URL(targetUrl).host
}

/** One line per failure, enough to replay it by hand. */
export function describeFailure(f: FuzzFailure): string {
  const body = f.case.body ? ` body(${f.case.body.length}B)=${JSON.stringify(f.case.body.subarray(0, 80).toString('latin1'))}` : ''
  const headers = f.case.headers
    .map(([n, v]) => `${n}: ${/^(authorization|x-api-key)$/i.test(n) ? v.slice(0, 12) + '…' : v.slice(0, 60)}`)
    .join(' | ')
  return `${f.problem}: [${f.case.part} ${f.case.endpoint}] ${f.case.mutation} — ${f.case.method} ${f.case.path.slice(0, 120)} [${headers}]${body}`
}

import { badRequest } from './errors.ts'

/**
 * The RFC 4918 §10.4 `If` header:
 *
 *   If: (<opaquelocktoken:a> ["etag"]) (Not <DAV:no-lock>)            untagged lists
 *   If: <http://host/x> (<opaquelocktoken:a>) <http://host/y> (["e"])  tagged lists
 *
 * The header is true when any list is true; a list is true when all its
 * conditions are. Untagged lists apply to the request URL, tagged ones to
 * their tag.
 */
export interface IfCondition {
  not: boolean
  /** A state token (lock token or any other coded URL). */
  token?: string
  /** An entity tag exactly as written, quotes included (`"abc"` or `W/"abc"`). */
  etag?: string
}

export interface IfList {
  /** The resource tag; absent for untagged lists. */
  tag?: string
  conditions: IfCondition[]
}

/** What a list is evaluated against. `etag` is quoted, as in the ETag header. */
export interface ResourceState {
  etag?: string
  /** Tokens of the live locks that cover the resource. */
  lockTokens: ReadonlySet<string>
}

export function parseIf(header: string): IfList[] {
  const lists: IfList[] = []
  let i = 0
  let tag: string | undefined
  let tagged: boolean | undefined
  const fail = (): never => {
    throw badRequest('Malformed If header')
  }
  const skipSpace = () => {
    while (i < header.length && /\s/.test(header[i])) i++
  }
  const readUntil = (close: string): string => {
    const end = header.indexOf(close, i + 1)
    if (end < 0) fail()
    const value = header.slice(i + 1, end)
    i = end + 1
    return value
  }
  const readEtag = (): string => {
    // "[" entity-tag "]" where entity-tag = [W/] quoted-string
    i++
    skipSpace()
    const start = i
    if (header.startsWith('W/', i)) i += 2
    if (header[i] !== '"') fail()
    const close = header.indexOf('"', i + 1)
    if (close < 0) fail()
    i = close + 1
    const etag = header.slice(start, i)
    skipSpace()
    if (header[i] !== ']') fail()
    i++
    return etag
  }

  for (;;) {
    skipSpace()
    if (i >= header.length) break
    const c = header[i]
    if (c === '<') {
      if (tagged === false) fail()
      tagged = true
      tag = readUntil('>').trim()
      if (!tag) fail()
      skipSpace()
      if (header[i] !== '(') fail()
    } else if (c === '(') {
      if (tagged === undefined) tagged = false
      i++
      const conditions: IfCondition[] = []
      for (;;) {
        skipSpace()
        if (header[i] === ')') {
          i++
          break
        }
        let not = false
        if (/^not\b/i.test(header.slice(i, i + 4) + ' ')) {
          not = true
          i += 3
          skipSpace()
        }
        if (header[i] === '<') {
          const token = readUntil('>').trim()
          if (!token) fail()
          conditions.push({ not, token })
        } else if (header[i] === '[') {
          conditions.push({ not, etag: readEtag() })
        } else fail()
      }
      if (conditions.length === 0) fail()
      lists.push({ tag, conditions })
    } else fail()
  }
  if (lists.length === 0) fail()
  return lists
}

const opaque = (etag: string) => (etag.startsWith('W/') ? etag.slice(2) : etag)

export function listHolds(list: IfList, state: ResourceState): boolean {
  return list.conditions.every((c) => {
    const matches =
      c.token !== undefined ? state.lockTokens.has(c.token) : state.etag !== undefined && opaque(state.etag) === opaque(c.etag!)
    return matches !== c.not
  })
}

/** The lock tokens a client submitted: every token it asserts (not negated) anywhere in the header. */
export function submittedTokens(lists: IfList[]): Set<string> {
  const tokens = new Set<string>()
  for (const list of lists) for (const c of list.conditions) if (c.token && !c.not) tokens.add(c.token)
  return tokens
}

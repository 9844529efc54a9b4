import { XMLParser, XMLValidator } from 'fast-xml-parser'

/**
 * The one XML helper of the WebDAV server: request bodies are parsed with
 * fast-xml-parser into a namespace-resolved tree, responses are built as the
 * same tree and serialized here, so escaping and namespace prefixes live in
 * one place.
 */
export const DAV = 'DAV:'
/** Our own namespace, for the read-only `cid` live property. */
export const GW = 'https://filecoin-gateway/ns'
/** ownCloud's and Nextcloud's namespaces: the properties their sync clients read (`oc:fileid`, `oc:permissions`…). */
export const OC = 'http://owncloud.org/ns'
export const NC = 'http://nextcloud.org/ns'

export interface XmlElement {
  ns: string
  local: string
  attrs: XmlAttr[]
  children: XmlNode[]
}
export interface XmlAttr {
  ns: string
  local: string
  value: string
}
export type XmlNode = XmlElement | string

export const el = (ns: string, local: string, children: XmlNode[] = [], attrs: XmlAttr[] = []): XmlElement => ({
  ns,
  local,
  attrs,
  children,
})
export const dav = (local: string, children: XmlNode[] = []) => el(DAV, local, children)

export const isElement = (n: XmlNode): n is XmlElement => typeof n !== 'string'
export const elements = (e: XmlElement): XmlElement[] => e.children.filter(isElement)
export const findChild = (e: XmlElement, ns: string, local: string) => elements(e).find((c) => c.ns === ns && c.local === local)
export const textOf = (e: XmlElement): string => e.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('')

// --- parsing ---------------------------------------------------------------

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  // We decode entities ourselves: only the five XML ones and character
  // references, so no DTD-defined entity can ever expand.
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  cdataPropName: '#cdata',
  commentPropName: '#comment',
  ignoreDeclaration: true,
  ignorePiTags: true,
})

/** Why a body is not acceptable XML; callers turn it into a 400. */
export class XmlError extends Error {
  override name = 'XmlError'
}
const badXml = (message: string) => new XmlError(message)

const MAX_DEPTH = 64
const XML_NS = 'http://www.w3.org/XML/1998/namespace'

/**
 * Parses a request body into its root element. Not well-formed XML, a DTD,
 * undeclared or empty-prefixed namespaces, or nesting deeper than 64 all fail
 * with 400 (billion-laughs style expansion is impossible: DOCTYPE is refused
 * and only predefined entities are decoded).
 */
export function parseXml(text: string): XmlElement {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw badXml('DTDs are not accepted in request bodies')
  let tree: unknown[]
  try {
    const valid = XMLValidator.validate(text)
    if (valid !== true) throw badXml(`Malformed XML: ${valid.err.msg}`)
    tree = parser.parse(text) as unknown[]
  } catch (err) {
    if (err instanceof XmlError) throw err
    throw badXml('Malformed XML')
  }
  const roots = tree.filter((n) => !isMeta(n as Record<string, unknown>))
  if (roots.length !== 1) throw badXml('XML body must have exactly one root element')
  const root = build(
    roots[0] as RawNode,
    new Map([
      ['', ''],
      ['xml', XML_NS],
    ]),
    0,
  )
  if (root === undefined || typeof root === 'string') throw badXml('XML body must have a root element')
  return root
}

type RawNode = Record<string, unknown> & { ':@'?: Record<string, string> }

const isMeta = (n: Record<string, unknown>) => '#comment' in n || ('#text' in n && String(n['#text']).trim() === '')

function build(node: RawNode, scope: Map<string, string>, depth: number): XmlNode | undefined {
  if (depth > MAX_DEPTH) throw badXml('XML nesting is too deep')
  if ('#text' in node) return decodeEntities(String(node['#text']))
  if ('#cdata' in node) return (node['#cdata'] as { '#text': string }[]).map((t) => String(t['#text'])).join('')
  if ('#comment' in node) return undefined
  const tag = Object.keys(node).find((k) => k !== ':@')
  if (!tag) return undefined
  const rawAttrs = node[':@'] ?? {}

  const inner = new Map(scope)
  for (const [name, raw] of Object.entries(rawAttrs)) {
    const value = decodeEntities(String(raw))
    if (name === 'xmlns') inner.set('', value)
    else if (name.startsWith('xmlns:')) {
      // Namespaces in XML 1.0: a prefix cannot be bound to the empty name.
      if (value === '') throw badXml(`Namespace prefix "${name.slice(6)}" declared empty`)
      inner.set(name.slice(6), value)
    }
  }
  const resolve = (qname: string, isAttr: boolean): { ns: string; local: string } => {
    const i = qname.indexOf(':')
    if (i < 0) return { ns: isAttr ? '' : inner.get('')!, local: qname }
    const ns = inner.get(qname.slice(0, i))
    if (ns === undefined) throw badXml(`Undeclared namespace prefix "${qname.slice(0, i)}"`)
    return { ns, local: qname.slice(i + 1) }
  }

  const attrs: XmlAttr[] = []
  for (const [name, raw] of Object.entries(rawAttrs)) {
    if (name === 'xmlns' || name.startsWith('xmlns:')) continue
    attrs.push({ ...resolve(name, true), value: decodeEntities(String(raw)) })
  }
  const children: XmlNode[] = []
  for (const child of (node[tag] as RawNode[]) ?? []) {
    const built = build(child, inner, depth + 1)
    if (built === undefined) continue
    const last = children[children.length - 1]
    // Text split by comments or CDATA is one text value.
    if (typeof built === 'string' && typeof last === 'string') children[children.length - 1] = last + built
    else children.push(built)
  }
  return { ...resolve(tag, false), attrs, children }
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }

function decodeEntities(s: string): string {
  if (!s.includes('&')) return s
  return s.replace(/&([^;&]*);?/g, (match, body: string) => {
    if (!match.endsWith(';')) throw badXml('Unterminated entity reference')
    if (body in PREDEFINED) return PREDEFINED[body]
    const m = /^#(x[0-9a-fA-F]{1,6}|[0-9]{1,7})$/.exec(body)
    if (!m) throw badXml(`Unknown entity "&${body};"`)
    const code = m[1][0] === 'x' ? parseInt(m[1].slice(1), 16) : parseInt(m[1], 10)
    if (!isXmlChar(code)) throw badXml('Character reference to a character XML does not allow')
    return String.fromCodePoint(code)
  })
}

const isXmlChar = (c: number) =>
  c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff)

// --- serializing -----------------------------------------------------------

/** Prefixes declared once on the root of every document we write. */
const FIXED: ReadonlyMap<string, string> = new Map([
  [DAV, 'd'],
  [GW, 'g'],
  [OC, 'oc'],
  [NC, 'nc'],
])

/** Serializes a whole document with `d:` (DAV:), `g:` (ours), `oc:` and `nc:` declared on the root. */
export function toXmlDocument(root: XmlElement): string {
  const decls = [...FIXED].map(([ns, p]) => ` xmlns:${p}="${escapeAttr(ns)}"`).join('')
  return `<?xml version="1.0" encoding="utf-8"?>\n${write(root, '', decls)}`
}

/** The XML declaration and the opening tag of a document's root (with the fixed prefixes), for documents written in parts. */
export function openXmlDocument(ns: string, local: string): { open: string; close: string } {
  const decls = [...FIXED].map(([uri, p]) => ` xmlns:${p}="${escapeAttr(uri)}"`).join('')
  const name = `${FIXED.get(ns)}:${local}`
  return { open: `<?xml version="1.0" encoding="utf-8"?>\n<${name}${decls}>`, close: `</${name}>` }
}

/** One element inside a document opened by `openXmlDocument`. */
export const toXmlFragment = (e: XmlElement): string => write(e, '')

/**
 * Writes an element. Namespaces other than the fixed ones become a default
 * namespace declaration on the element that needs it (including `xmlns=""`
 * for no namespace), so any stored fragment keeps its meaning wherever it lands.
 */
function write(e: XmlElement, defaultNs: string, extra = ''): string {
  let name = e.local
  let decls = extra
  let childDefault = defaultNs
  const fixed = FIXED.get(e.ns)
  if (fixed) name = `${fixed}:${e.local}`
  else if (e.ns !== defaultNs) {
    decls += ` xmlns="${escapeAttr(e.ns)}"`
    childDefault = e.ns
  }
  let n = 0
  for (const a of e.attrs) {
    let aname = a.local
    const p = a.ns === XML_NS ? 'xml' : FIXED.get(a.ns) // `xml:` is bound by definition, never declared
    if (p) aname = `${p}:${a.local}`
    else if (a.ns !== '') {
      aname = `a${n}:${a.local}`
      decls += ` xmlns:a${n++}="${escapeAttr(a.ns)}"`
    }
    decls += ` ${aname}="${escapeAttr(a.value)}"`
  }
  if (e.children.length === 0) return `<${name}${decls}/>`
  const body = e.children.map((c) => (typeof c === 'string' ? escapeText(c) : write(c, childDefault))).join('')
  return `<${name}${decls}>${body}</${name}>`
}

// Characters XML 1.0 cannot carry at all become U+FFFD rather than a broken document.
const INVALID =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

export function escapeText(s: string): string {
  return s.replace(INVALID, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#13;')
}

export function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;').replace(/\n/g, '&#10;').replace(/\t/g, '&#9;')
}

import { DAV, GW } from '../../../server/gateway/webdav/index.ts'
import { elements, findChild, parseXml, textOf, type XmlElement } from '../../../server/gateway/webdav/xml.ts'

export { DAV, GW }

/** One WebDAV request against a test server. */
export function dav(
  base: string,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string | Uint8Array } = {},
): Promise<Response> {
  return fetch(base + path, { method, headers: init.headers, body: init.body as BodyInit | undefined })
}

export interface PropResult {
  href: string
  /** Property elements by status code. */
  byStatus: Map<number, XmlElement[]>
}

/** Reads a 207 body into responses; fails loudly on anything that is not a DAV:multistatus. */
export function parseMultistatus(text: string): PropResult[] {
  const root = parseXml(text)
  if (root.ns !== DAV || root.local !== 'multistatus') throw new Error(`not a multistatus: ${text}`)
  return elements(root).map((response) => {
    const byStatus = new Map<number, XmlElement[]>()
    for (const propstat of elements(response).filter((e) => e.local === 'propstat')) {
      const code = Number(/HTTP\/1\.1 (\d+)/.exec(textOf(findChild(propstat, DAV, 'status')!))![1])
      byStatus.set(code, elements(findChild(propstat, DAV, 'prop')!))
    }
    return { href: textOf(findChild(response, DAV, 'href')!), byStatus }
  })
}

/** The text of property `{ns}local` with status 200 in a result, or undefined. */
export function propText(result: PropResult, ns: string, local: string): string | undefined {
  const el = result.byStatus.get(200)?.find((p) => p.ns === ns && p.local === local)
  return el && textOf(el)
}

/** The `g:code` of an XML error body. */
export async function errorCode(res: Response): Promise<string | undefined> {
  const text = await res.text()
  if (!text) return undefined
  const root = parseXml(text)
  const code = findChild(root, GW, 'code')
  return code && textOf(code)
}

export const PROPFIND_ALL = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>'

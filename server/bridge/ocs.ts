import type { IncomingMessage, ServerResponse } from 'node:http'
import { sendJson, sendText } from '../shared/json-response.ts'
import { requestedUrl } from '../shared/request-log.ts'

/** What an OCS endpoint answers; `renderOcs` wraps it in `{ ocs: { meta, data } }`. */
export interface OcsAnswer {
  status: number
  message?: string
  data: unknown
}

/** JSON when asked for (`?format=json` or an Accept naming json), XML otherwise, as Nextcloud does. */
function wantsJson(req: IncomingMessage): boolean {
  const url = requestedUrl(req)
  const query = url.indexOf('?')
  const format = query === -1 ? null : new URLSearchParams(url.slice(query + 1)).get('format')
  if (format) return format.toLowerCase() === 'json'
  return /\bjson\b/i.test(req.headers.accept ?? '')
}

// OCS v1 keeps HTTP 200 for most failures and puts the real outcome in meta.statuscode;
// these are the codes Nextcloud uses for the failures a client can meet here.
const V1_CODES: Record<number, number> = { 401: 997, 403: 997, 404: 998 }

export function renderOcs(req: IncomingMessage, res: ServerResponse, answer: OcsAnswer): void {
  const ok = answer.status < 300
  const v1 = requestedUrl(req).startsWith('/ocs/v1.php')
  const statuscode = ok ? (v1 ? 100 : 200) : v1 ? (V1_CODES[answer.status] ?? answer.status) : answer.status
  const httpStatus = v1 && ![401, 403, 429].includes(answer.status) ? 200 : answer.status
  const ocs = {
    meta: { status: ok ? 'ok' : 'failure', statuscode, message: answer.message ?? (ok ? 'OK' : ''), totalitems: '', itemsperpage: '' },
    data: answer.data,
  }
  if (wantsJson(req)) return sendJson(res, httpStatus, { ocs })
  sendText(res, httpStatus, 'text/xml; charset=UTF-8', `<?xml version="1.0"?>\n${toXml('ocs', ocs)}\n`)
}

const escapeXml = (s: string) => s.replace(/[<>&]/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&amp;'))

/** PHP-style rendering: lists become `<element>` items, true is 1, false and null are empty. */
function toXml(name: string, value: unknown): string {
  if (value === null || value === undefined || value === false) return `<${name}/>`
  if (value === true) return `<${name}>1</${name}>`
  if (Array.isArray(value)) return `<${name}>${value.map((v) => toXml('element', v)).join('')}</${name}>`
  if (typeof value === 'object') {
    const inner = Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => toXml(k, v))
      .join('')
    return `<${name}>${inner}</${name}>`
  }
  return `<${name}>${escapeXml(String(value))}</${name}>`
}

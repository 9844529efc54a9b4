import type { Request, Response } from 'express'

/** What an OCS endpoint answers; `renderOcs` wraps it in `{ ocs: { meta, data } }`. */
export interface OcsAnswer {
  status: number
  message?: string
  data: unknown
}

const isV1 = (req: Request) => req.originalUrl.startsWith('/ocs/v1.php')

/** JSON when asked for (`?format=json` or an Accept naming json), XML otherwise, as Nextcloud does. */
function wantsJson(req: Request): boolean {
  const format = typeof req.query.format === 'string' ? req.query.format.toLowerCase() : undefined
  if (format) return format === 'json'
  return /\bjson\b/i.test(req.headers.accept ?? '')
}

// OCS v1 keeps HTTP 200 for most failures and puts the real outcome in meta.statuscode;
// these are the codes Nextcloud uses for the failures a client can meet here.
const V1_CODES: Record<number, number> = { 401: 997, 403: 997, 404: 998 }

export function renderOcs(req: Request, res: Response, answer: OcsAnswer): void {
  const ok = answer.status < 300
  const v1 = isV1(req)
  const statuscode = ok ? (v1 ? 100 : 200) : v1 ? (V1_CODES[answer.status] ?? answer.status) : answer.status
  const httpStatus = v1 && ![401, 403, 429].includes(answer.status) ? 200 : answer.status
  const ocs = {
    meta: { status: ok ? 'ok' : 'failure', statuscode, message: answer.message ?? (ok ? 'OK' : ''), totalitems: '', itemsperpage: '' },
    data: answer.data,
  }
  res.status(httpStatus)
  if (wantsJson(req)) {
    res.json({ ocs })
    return
  }
  res.type('text/xml; charset=UTF-8').send(`<?xml version="1.0"?>\n${toXml('ocs', ocs)}\n`)
}

const escapeXml = (s: string) => s.replace(/[<>&]/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&amp;'))

/** PHP-style rendering: lists become `<element>` items, true is 1, false and null are empty. */
function toXml(name: string, value: unknown): string {
  if (value === null || value === undefined || value === false) return `<${name}/>`
  if (value === true) return `<${name}>1</${name}>`
  if (Array.isArray(value)) return `<${name}>${value.map((v) => toXml('element', v)).join('')}</${name}>`
  if (typeof value === 'object') {
    const inner = Object.entries(value as Record<string, unknown>).map(([k, v]) => toXml(k, v)).join('')
    return `<${name}>${inner}</${name}>`
  }
  return `<${name}>${escapeXml(String(value))}</${name}>`
}

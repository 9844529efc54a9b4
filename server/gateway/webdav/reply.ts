import type { Response } from 'express'
import { dav, toXmlDocument, type XmlElement } from './xml.ts'

/** Sends an XML document (207 multistatus, LOCK answers). */
export function sendXml(res: Response, status: number, root: XmlElement, headers: Record<string, string> = {}): void {
  const body = toXmlDocument(root)
  res.status(status).set(headers).set('Content-Type', 'application/xml; charset=utf-8').set('Content-Length', String(Buffer.byteLength(body))).end(body)
}

export const sendMultistatus = (res: Response, responses: XmlElement[]) => sendXml(res, 207, dav('multistatus', responses))

import type { Response } from 'express'
import { DAV, dav, openXmlDocument, toXmlDocument, toXmlFragment, type XmlElement } from './xml.ts'

/** Sends an XML document (207 multistatus, LOCK answers). */
export function sendXml(res: Response, status: number, root: XmlElement, headers: Record<string, string> = {}): void {
  const body = toXmlDocument(root)
  res
    .status(status)
    .set(headers)
    .set('Content-Type', 'application/xml; charset=utf-8')
    .set('Content-Length', String(Buffer.byteLength(body)))
    .end(body)
}

export const sendMultistatus = (res: Response, responses: XmlElement[]) => sendXml(res, 207, dav('multistatus', responses))

/** Responses described between two yields to the event loop. */
const BATCH = 64

/**
 * One batch of one listing per turn of the event loop, whatever the number
 * of listings under way. Yielding with setImmediate alone is not enough:
 * Node runs every queued immediate before it looks at the network again, so
 * 200 listings ran 200 batches between two other requests. The event loop is
 * the process's, so is this queue.
 */
const waitingBatches: (() => void)[] = []
let pumping = false
function pumpBatches(): void {
  waitingBatches.shift()?.()
  if (waitingBatches.length > 0) setImmediate(pumpBatches)
  else pumping = false
}
function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waitingBatches.push(resolve)
    if (!pumping) {
      pumping = true
      setImmediate(pumpBatches)
    }
  })
}

/**
 * A 207 multistatus written as it is described, a batch at a time, taking
 * turns with every other listing and waiting for a slow reader: a folder of
 * thousands of files never holds the process for long, and many such
 * listings at once leave room for every other request.
 */
export async function streamMultistatus<T>(res: Response, items: readonly T[], describe: (item: T) => XmlElement): Promise<void> {
  const { open, close } = openXmlDocument(DAV, 'multistatus')
  res.status(207).set('Content-Type', 'application/xml; charset=utf-8')
  let chunk = open
  for (let i = 0; i < items.length; i++) {
    chunk += toXmlFragment(describe(items[i]))
    if ((i + 1) % BATCH !== 0) continue
    if (!res.write(chunk)) await drainedOrClosed(res)
    chunk = ''
    await nextTurn()
    if (res.destroyed) return
  }
  res.end(chunk + close)
}

/** Resolves when a slow reader has taken what was written, or has gone; leaves no listener behind. */
function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

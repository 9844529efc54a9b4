import { readXml } from '../body.ts'
import type { MethodHandler } from '../context.ts'
import { badRequest, notFound } from '../errors.ts'
import { hrefOf, requestPath } from '../paths.ts'
import { checkWrite, guardingLocks, requireTokens } from '../preconditions.ts'
import { isProtected, propResponse } from '../props.ts'
import { sendMultistatus } from '../reply.ts'
import { DAV, dav, el, elements, type XmlElement } from '../xml.ts'

interface Operation {
  set: boolean
  prop: XmlElement
}

/**
 * PROPPATCH: sets and removes dead properties in document order, all or
 * nothing. A protected (live) property fails with 403 and every other
 * operation of the request then reports 424 (RFC 4918 §9.2).
 */
export const proppatch: MethodHandler = async (req, res, ctx) => {
  const { path } = requestPath(req)
  const operations = parseUpdate(await readXml(req))
  const entry = await ctx.namespace.get(path)
  if (!entry) throw notFound()
  const tokens = await checkWrite(req, ctx, path, 'write')

  const key = (p: XmlElement) => `${p.ns} ${p.local}`
  const status = new Map<string, { name: XmlElement; code: number }>()
  for (const op of operations) status.set(key(op.prop), { name: el(op.prop.ns, op.prop.local), code: 200 })
  const refused = operations.filter((op) => isProtected(op.prop.ns, op.prop.local))
  if (refused.length > 0) {
    for (const s of status.values()) s.code = 424
    for (const op of refused) status.get(key(op.prop))!.code = 403
  } else {
    await ctx.atomically(async (t) => {
      // The locks may have changed while the body was read.
      await requireTokens(req, t, await guardingLocks(t, path, 'write'), tokens)
      for (const op of operations) {
        if (op.set) await t.props.set(path, op.prop)
        else await t.props.remove(path, op.prop.ns, op.prop.local)
      }
    })
  }

  const byStatus = new Map<number, XmlElement[]>()
  for (const s of status.values()) byStatus.set(s.code, [...(byStatus.get(s.code) ?? []), s.name])
  const response = propResponse(hrefOf(req, path, entry.kind === 'dir'), byStatus)
  if (refused.length > 0) response.children.push(dav('responsedescription', ['Protected properties cannot be changed']))
  sendMultistatus(res, [response])
}

function parseUpdate(body: XmlElement | undefined): Operation[] {
  if (!body || body.ns !== DAV || body.local !== 'propertyupdate') throw badRequest('Expected a DAV:propertyupdate body')
  const operations: Operation[] = []
  for (const action of elements(body)) {
    if (action.ns !== DAV || (action.local !== 'set' && action.local !== 'remove')) continue
    for (const prop of elements(action).filter((e) => e.ns === DAV && e.local === 'prop')) {
      for (const p of elements(prop)) operations.push({ set: action.local === 'set', prop: p })
    }
  }
  if (operations.length === 0) throw badRequest('DAV:propertyupdate has no set or remove')
  return operations
}

import { readXml } from '../body.ts'
import type { MethodHandler } from '../context.ts'
import { badRequest, forbidden, notFound } from '../errors.ts'
import { requestPath } from '../paths.ts'
import { describe, loadPropView, type PropRequest } from '../props.ts'
import { streamMultistatus } from '../reply.ts'
import { DAV, dav, elements, findChild, type XmlElement } from '../xml.ts'
import { header } from '../header.ts'

/**
 * PROPFIND with Depth 0 or 1. Depth infinity (also the default when the
 * header is missing) is refused with 403 `propfind-finite-depth`, as RFC 4918
 * §9.1 allows: a whole tree in one answer is too costly to offer.
 */
export const propfind: MethodHandler = async (req, res, ctx) => {
  const { path, slash } = requestPath(req)
  const depth = (header(req, 'Depth') ?? 'infinity').trim().toLowerCase()
  if (depth !== '0' && depth !== '1' && depth !== 'infinity') throw badRequest('Depth must be 0, 1 or infinity')
  if (depth === 'infinity')
    throw forbidden('FINITE_DEPTH_ONLY', 'PROPFIND with Depth: infinity is not supported', dav('propfind-finite-depth'))
  const what = parsePropfind(await readXml(req))
  const entry = await ctx.namespace.get(path)
  if (!entry || (slash && entry.kind === 'file')) throw notFound()

  const entries = depth === '1' && entry.kind === 'dir' ? [entry, ...(await ctx.namespace.children(path))] : [entry]
  const view = await loadPropView(ctx, entries, what)
  await streamMultistatus(res, entries, (e) => describe(req, view, e, what))
}

/** An empty body means allprop (RFC 4918 §9.1); unknown elements are ignored. */
function parsePropfind(body: XmlElement | undefined): PropRequest {
  if (!body) return { kind: 'allprop', include: [] }
  if (body.ns !== DAV || body.local !== 'propfind') throw badRequest('Expected a DAV:propfind body')
  const prop = findChild(body, DAV, 'prop')
  if (prop) return { kind: 'prop', names: elements(prop) }
  if (findChild(body, DAV, 'propname')) return { kind: 'propname' }
  if (findChild(body, DAV, 'allprop')) {
    const include = findChild(body, DAV, 'include')
    return { kind: 'allprop', include: include ? elements(include) : [] }
  }
  throw badRequest('DAV:propfind needs prop, propname or allprop')
}

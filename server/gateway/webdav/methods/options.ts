import type { MethodHandler } from '../context.ts'
import { requestPath } from '../paths.ts'

export const ALLOW = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK'

/** Class 1 and 2 (locking); the same answer for every path, existing or not. */
export const options: MethodHandler = async (req, res) => {
  if (req.originalUrl !== '*') requestPath(req) // hostile paths are still a 400
  res.status(200).set({ DAV: '1, 2', Allow: ALLOW, 'MS-Author-Via': 'DAV', 'Accept-Ranges': 'bytes', 'Content-Length': '0' }).end()
}

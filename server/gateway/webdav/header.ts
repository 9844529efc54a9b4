import type { Request } from 'express'

/** A request header as one string (Node types custom headers as possibly repeated). */
export function header(req: Request, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()]
  return Array.isArray(value) ? value.join(', ') : value
}

import type { Request, Response } from 'express'
import type { Logger } from '../../shared/logger.ts'
import type { Namespace } from '../namespace.ts'
import type { DeadProps } from './dead-props.ts'
import type { LockStore } from './locks.ts'

/** The part of the content store WebDAV uses (server/gateway/content implements it). */
export interface ContentSource {
  ingest(source: AsyncIterable<Uint8Array>, options?: { signal?: AbortSignal }): Promise<{ cid: string; size: number; dagSize: number }>
  /** Inclusive `end`; throws a GatewayError 404 for unknown content. */
  read(cid: string, range?: { start: number; end: number }): AsyncIterable<Uint8Array>
}

export interface DavContext {
  namespace: Namespace
  content: ContentSource
  props: DeadProps
  locks: LockStore
  logger: Logger
}

export type MethodHandler = (req: Request, res: Response, ctx: DavContext) => Promise<void>

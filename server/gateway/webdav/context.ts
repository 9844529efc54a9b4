import type { Request, Response } from 'express'
import type { Logger } from '../../shared/logger.ts'
import type { Namespace } from '../namespace.ts'
import type { DeadProps } from './dead-props.ts'
import type { LockStore } from './locks.ts'

/** The part of the content store WebDAV uses (server/gateway/content implements it). */
export interface ContentSource {
  ingest(source: AsyncIterable<Uint8Array>, options?: { signal?: AbortSignal }): Promise<{ cid: string; size: number; dagSize: number }>
  /** Inclusive `end`; unknown content fails (GatewayError 404) at the first read, before any byte. */
  read(cid: string, range?: { start: number; end: number }): AsyncIterable<Uint8Array>
}

/** What WebDAV keeps: the tree, dead properties, locks; over the store or over one transaction. */
export interface DavStores {
  namespace: Namespace
  props: DeadProps
  locks: LockStore
}

export interface DavContext extends DavStores {
  content: ContentSource
  logger: Logger
  /** Why an upload of so many bytes must be refused to keep room for sealing; undefined when it fits. */
  uploadRefusal?: (bytes?: number) => Promise<string | undefined>
  /** Gives up the room held for deletes (room-for-deletes.ts): true when there was some to give. */
  releaseRoomForDeletes?: () => Promise<boolean>
  /**
   * Runs `fn` in one transaction over stores bound to it, after every tree
   * change before it: checks made inside (the path is free, the locks are
   * held) still hold when it commits.
   */
  atomically<T>(fn: (t: DavStores) => Promise<T>): Promise<T>
}

export type MethodHandler = (req: Request, res: Response, ctx: DavContext) => Promise<void>

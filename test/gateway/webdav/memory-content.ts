import { createHash } from 'node:crypto'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { create } from 'multiformats/hashes/digest'
import { GatewayError } from '../../../server/gateway/errors.ts'
import type { ContentSource } from '../../../server/gateway/webdav/index.ts'

export interface MemoryContent extends ContentSource {
  blobs: Map<string, Buffer>
}

/**
 * A small in-memory content store for WebDAV unit tests: a raw-leaf CIDv1 of
 * the sha2-256 of the bytes (a real CID, though not the UnixFS DAG the real
 * store builds). It buffers, which is fine for a test double.
 */
export function createMemoryContent(): MemoryContent {
  const blobs = new Map<string, Buffer>()
  return {
    blobs,
    async ingest(source, options) {
      const chunks: Buffer[] = []
      for await (const chunk of source) {
        options?.signal?.throwIfAborted()
        chunks.push(Buffer.from(chunk))
      }
      const bytes = Buffer.concat(chunks)
      const cid = CID.createV1(raw.code, create(0x12, createHash('sha256').update(bytes).digest())).toString()
      blobs.set(cid, bytes)
      return { cid, size: bytes.length, dagSize: bytes.length }
    },
    async *read(cid, range) {
      const bytes = blobs.get(cid)
      if (!bytes) throw new GatewayError(404, 'NOT_FOUND', 'Unknown content')
      const start = range?.start ?? 0
      const end = range ? range.end + 1 : bytes.length
      for (let at = start; at < end; at += 65536) yield bytes.subarray(at, Math.min(end, at + 65536))
    },
  }
}

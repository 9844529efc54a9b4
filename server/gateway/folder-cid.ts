import * as dagPb from '@ipld/dag-pb'
import { UnixFS } from 'ipfs-unixfs'
import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'
import type { Namespace } from './namespace.ts'

export interface DirectoryLink {
  name: string
  cid: string
  /** The child's cumulative DAG size (Tsize). */
  dagSize: number
}

export interface DirectoryDag {
  cid: string
  /** Serialized node size plus the Tsize of every link. */
  dagSize: number
  bytes: Uint8Array
}

/**
 * The UnixFS directory node kubo builds for `ipfs add -r --cid-version=1`: a
 * basic (not HAMT-sharded) dag-pb directory, links sorted by name bytes, each
 * link's Tsize being the child's DAG size, no mode or mtime.
 */
export async function directoryDag(links: DirectoryLink[]): Promise<DirectoryDag> {
  const node = dagPb.prepare({
    Data: new UnixFS({ type: 'directory' }).marshal(),
    // prepare() sorts links by name bytes, as the dag-pb spec (and kubo) require.
    Links: links.map((l) => ({ Name: l.name, Hash: CID.parse(l.cid), Tsize: l.dagSize })),
  })
  const bytes = dagPb.encode(node)
  const cid = CID.createV1(dagPb.code, await sha256.digest(bytes))
  return { cid: cid.toString(), bytes, dagSize: links.reduce((sum, l) => sum + l.dagSize, bytes.length) }
}

/**
 * The CID of a folder's current contents, computed bottom-up from the
 * namespace (files carry their own CID and DAG size). Large folders that
 * kubo would shard (HAMT, over 256 KiB of links) are still built flat here.
 */
export async function folderDag(namespace: Namespace, path: string): Promise<DirectoryDag> {
  const links: DirectoryLink[] = []
  for (const child of namespace.children(path)) {
    const name = child.path.slice(child.path.lastIndexOf('/') + 1)
    if (child.kind === 'dir') {
      const sub = await folderDag(namespace, child.path)
      links.push({ name, cid: sub.cid, dagSize: sub.dagSize })
    } else if (child.cid) {
      links.push({ name, cid: child.cid, dagSize: child.dagSize })
    }
  }
  return directoryDag(links)
}

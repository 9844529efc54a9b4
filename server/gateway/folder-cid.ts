import * as dagPb from '@ipld/dag-pb'
import { murmur364 } from '@multiformats/murmur3'
import { UnixFS } from 'ipfs-unixfs'
import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'
import { parentOf, type Entry } from './namespace.ts'

/**
 * kubo's `HAMTShardingSize`: a directory whose links are estimated at this
 * many bytes or more (name bytes + CID bytes per link, boxo's
 * `needsToSwitchToHAMTDir` with `>=`) is stored as a HAMT shard.
 */
export const HAMT_SHARDING_THRESHOLD = 256 * 1024
/** Slots per shard node (8 bits of the name's hash per level), as kubo. */
const HAMT_FANOUT = 256
const MURMUR3_X64_64 = 0x22n

export interface DirectoryOptions {
  /** Bytes of estimated links from which the directory is sharded (default kubo's 256 KiB; tests force sharding with 0). */
  shardThreshold?: number
  /** CID version of the directory nodes (default 1; 0 only to check against kubo's CIDv0 vectors). */
  cidVersion?: 0 | 1
}

export interface DirectoryLink {
  name: string
  cid: string
  /** The child's cumulative DAG size (Tsize). */
  dagSize: number
}

export interface DirectoryNode {
  cid: string
  bytes: Uint8Array
}

export interface DirectoryDag extends DirectoryNode {
  /** Serialized node size plus the Tsize of every link. */
  dagSize: number
  /** Every directory node of the DAG (this one, HAMT shards, sub-folders), never file blocks. */
  nodes: DirectoryNode[]
}

const utf8 = new TextEncoder()

/**
 * The UnixFS directory kubo builds for `ipfs add -r --cid-version=1`, links
 * sorted by name bytes, each link's Tsize being the child's DAG size, no
 * mode or mtime: a basic dag-pb directory, or a HAMT shard once its links
 * reach `HAMT_SHARDING_THRESHOLD`.
 */
export async function directoryDag(links: DirectoryLink[], opts: DirectoryOptions = {}, subfolders: DirectoryNode[] = []): Promise<DirectoryDag> {
  const entries = links.map((l) => ({ ...l, nameBytes: utf8.encode(l.name), hash: CID.parse(l.cid) }))
  const estimate = entries.reduce((sum, e) => sum + e.nameBytes.length + e.hash.bytes.length, 0)
  const threshold = opts.shardThreshold ?? HAMT_SHARDING_THRESHOLD
  if (entries.length > 0 && estimate >= threshold) {
    const hashed = await Promise.all(entries.map(async (e) => ({ ...e, slots: await murmur364.encode(e.nameBytes) })))
    const shard = await shardNode(hashed, 0, opts.cidVersion ?? 1)
    return { ...shard, nodes: [...shard.nodes, ...subfolders] }
  }
  return encodeNode(new UnixFS({ type: 'directory' }), entries.map((e) => ({ Name: e.name, Hash: e.hash, Tsize: e.dagSize })), opts.cidVersion ?? 1, subfolders)
}

interface ShardEntry extends DirectoryLink {
  hash: CID
  /** murmur3-x64-64 of the name: byte `depth` picks the slot at each level. */
  slots: Uint8Array
}

/**
 * One HAMT level, as boxo's `hamt` package writes it: each occupied slot is
 * either one entry (link name = two hex digits of the slot + the entry's
 * name) or, when several names share the slot, a child shard one level down
 * (link name = the two hex digits alone). The shard's Data carries the slot
 * bitfield (big-endian, no leading zero bytes), the fanout and the hash type.
 */
async function shardNode(entries: ShardEntry[], depth: number, cidVersion: 0 | 1): Promise<DirectoryDag> {
  // Two names with the same 64-bit hash: kubo would rehash; at 2^-64 per pair, refusing is fair.
  if (depth >= 8) throw new Error(`HAMT hash collision between ${entries.map((e) => JSON.stringify(e.name)).join(' and ')}`)
  const bySlot = new Map<number, ShardEntry[]>()
  for (const entry of entries) {
    const slot = entry.slots[depth]
    // Appended in place: copying the slot's list per entry made a 100 000-name folder quadratic (seconds, mostly GC).
    const list = bySlot.get(slot)
    if (list) list.push(entry)
    else bySlot.set(slot, [entry])
  }
  const bitfield = new Uint8Array(HAMT_FANOUT / 8)
  const links: dagPb.PBLink[] = []
  const below: DirectoryNode[] = []
  for (const slot of [...bySlot.keys()].sort((a, b) => a - b)) {
    bitfield[bitfield.length - 1 - (slot >> 3)] |= 1 << (slot & 7)
    const prefix = slot.toString(16).toUpperCase().padStart(2, '0')
    const inSlot = bySlot.get(slot)!
    if (inSlot.length === 1) {
      links.push({ Name: prefix + inSlot[0].name, Hash: inSlot[0].hash, Tsize: inSlot[0].dagSize })
    } else {
      // A macrotask between the top level's sub-shards: a folder of 100 000 names takes seconds, and other requests go on meanwhile.
      if (depth === 0) await new Promise((resolve) => setImmediate(resolve))
      const child = await shardNode(inSlot, depth + 1, cidVersion)
      links.push({ Name: prefix, Hash: CID.parse(child.cid), Tsize: child.dagSize })
      below.push(...child.nodes)
    }
  }
  const firstUsed = bitfield.findIndex((byte) => byte !== 0)
  const data = new UnixFS({ type: 'hamt-sharded-directory', data: bitfield.subarray(firstUsed), fanout: BigInt(HAMT_FANOUT), hashType: MURMUR3_X64_64 })
  return encodeNode(data, links, cidVersion, below)
}

async function encodeNode(data: UnixFS, links: dagPb.PBLink[], cidVersion: 0 | 1, below: DirectoryNode[] = []): Promise<DirectoryDag> {
  // prepare() sorts links by name bytes, as the dag-pb spec (and kubo) require; HAMT names sort by slot.
  const bytes = dagPb.encode(dagPb.prepare({ Data: data.marshal(), Links: links }))
  const digest = await sha256.digest(bytes)
  const cid = (cidVersion === 0 ? CID.createV0(digest) : CID.createV1(dagPb.code, digest)).toString()
  return { cid, bytes, dagSize: links.reduce((sum, l) => sum + (l.Tsize ?? 0), bytes.length), nodes: [{ cid, bytes }, ...below] }
}

/**
 * The CID of a folder's current contents, computed bottom-up from its
 * entries (`below`: everything under `path`, as `Namespace.descendants`
 * gives it, read in one query; files carry their own CID and DAG size).
 */
export async function folderDag(below: Entry[], path: string): Promise<DirectoryDag> {
  const children = new Map<string, Entry[]>()
  for (const e of below) {
    const parent = parentOf(e.path)
    const list = children.get(parent)
    if (list) list.push(e)
    else children.set(parent, [e])
  }
  const build = async (folder: string): Promise<DirectoryDag> => {
    const links: DirectoryLink[] = []
    const subfolders: DirectoryNode[] = []
    for (const child of children.get(folder) ?? []) {
      const name = child.path.slice(child.path.lastIndexOf('/') + 1)
      if (child.kind === 'dir') {
        const sub = await build(child.path)
        links.push({ name, cid: sub.cid, dagSize: sub.dagSize })
        subfolders.push(...sub.nodes)
      } else if (child.cid) {
        links.push({ name, cid: child.cid, dagSize: child.dagSize })
      }
    }
    return directoryDag(links, {}, subfolders)
  }
  return build(path)
}

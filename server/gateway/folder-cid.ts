import * as dagPb from '@ipld/dag-pb'
import { murmur364 } from '@multiformats/murmur3'
import { UnixFS } from 'ipfs-unixfs'
import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'
import { DEFAULT_CID_PROFILE } from '../shared/cid-profile.ts'
import { LAYOUTS, type DagLayout, type DagProfile } from './content/unixfs-dag.ts'
import { parentOf, type Entry } from './namespace.ts'

/**
 * kubo's `HAMTShardingSize` (IPIP-499: 256 KiB in both profiles): a directory
 * past it is stored as a HAMT shard. How its size is judged depends on the
 * profile (see `pastThreshold`).
 */
export const HAMT_SHARDING_THRESHOLD = 256 * 1024
/** Slots per shard node (8 bits of the name's hash per level), as kubo. */
const HAMT_FANOUT = 256
const MURMUR3_X64_64 = 0x22n

export interface DirectoryOptions {
  /** The folder's profile: CID version and sharding rule (default DEFAULT_CID_PROFILE). */
  profile?: DagProfile
  /** Bytes from which the directory is sharded (default 256 KiB; tests force sharding with 0). */
  shardThreshold?: number
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
export async function directoryDag(
  links: DirectoryLink[],
  opts: DirectoryOptions = {},
  subfolders: DirectoryNode[] = [],
): Promise<DirectoryDag> {
  const layout = LAYOUTS[opts.profile ?? DEFAULT_CID_PROFILE]
  const entries = links.map((l) => ({ ...l, nameBytes: utf8.encode(l.name), hash: CID.parse(l.cid) }))
  const threshold = opts.shardThreshold ?? HAMT_SHARDING_THRESHOLD
  const pbLinks = entries.map((e) => ({ Name: e.name, Hash: e.hash, Tsize: e.dagSize }))
  // Serialized at most once: to be sized (block-bytes), then kept if the directory stays flat.
  let flat: Uint8Array | undefined
  const flatBytes = () => (flat ??= dagPb.encode(dagPb.prepare({ Data: DIRECTORY_DATA, Links: pbLinks })))
  if (entries.length > 0 && pastThreshold(layout, entries, flatBytes, threshold)) {
    const hashed = await Promise.all(entries.map(async (e) => ({ ...e, slots: await murmur364.encode(e.nameBytes) })))
    const shard = await shardNode(hashed, 0, layout.cidVersion)
    return { ...shard, nodes: [...shard.nodes, ...subfolders] }
  }
  return nodeOf(flatBytes(), pbLinks, layout.cidVersion, subfolders)
}

const DIRECTORY_DATA = new UnixFS({ type: 'directory' }).marshal()

/**
 * Whether a directory is to be sharded (boxo ipld/unixfs/io/directory.go).
 * `links-bytes`: the links' name bytes plus CID bytes, nothing else.
 * `block-bytes` (IPIP-499's unixfs-v1-2025): the flat directory node as it
 * would be serialized. Compared with `>=` by Kubo up to 0.39 (our
 * kubo-cid-v1), with `>` by boxo 0.37+ and IPIP-499's profiles.
 */
function pastThreshold(
  layout: DagLayout,
  entries: { nameBytes: Uint8Array; hash: CID }[],
  flatBytes: () => Uint8Array,
  threshold: number,
): boolean {
  const size =
    layout.shardSizing === 'links-bytes'
      ? entries.reduce((sum, e) => sum + e.nameBytes.length + e.hash.bytes.length, 0)
      : flatBytes().length
  return layout.shardsAtThreshold ? size >= threshold : size > threshold
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
  const data = new UnixFS({
    type: 'hamt-sharded-directory',
    data: bitfield.subarray(firstUsed),
    fanout: BigInt(HAMT_FANOUT),
    hashType: MURMUR3_X64_64,
  })
  // prepare() sorts links by name bytes, as the dag-pb spec (and kubo) require; HAMT names sort by slot.
  return nodeOf(dagPb.encode(dagPb.prepare({ Data: data.marshal(), Links: links })), links, cidVersion, below)
}

/** A serialized directory node: its CID, its DAG size (its bytes plus its links' Tsize) and the nodes below it. */
async function nodeOf(bytes: Uint8Array, links: dagPb.PBLink[], cidVersion: 0 | 1, below: DirectoryNode[] = []): Promise<DirectoryDag> {
  const digest = await sha256.digest(bytes)
  const cid = (cidVersion === 0 ? CID.createV0(digest) : CID.createV1(dagPb.code, digest)).toString()
  return { cid, bytes, dagSize: links.reduce((sum, l) => sum + (l.Tsize ?? 0), bytes.length), nodes: [{ cid, bytes }, ...below] }
}

/**
 * The CID of a folder's current contents, computed bottom-up from its
 * entries (`below`: everything under `path`, as `Namespace.descendants`
 * gives it, read in one query; files carry their own CID and DAG size).
 */
export async function folderDag(below: Entry[], path: string, profile: DagProfile = DEFAULT_CID_PROFILE): Promise<DirectoryDag> {
  const folderProfiles = new Map<string, DagProfile>([[path, profile]])
  for (const e of below) if (e.kind === 'dir') folderProfiles.set(e.path, e.cidProfile)
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
    return directoryDag(links, { profile: folderProfiles.get(folder) ?? DEFAULT_CID_PROFILE }, subfolders)
  }
  return build(path)
}

import { describe, expect, it } from 'vitest'
import * as dagPb from '@ipld/dag-pb'
import { UnixFS } from 'ipfs-unixfs'
import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'
import * as raw from 'multiformats/codecs/raw'
import { importer } from 'ipfs-unixfs-importer'
import { createNamespace, type Namespace } from '../../server/gateway/namespace.ts'
import { directoryDag, folderDag, HAMT_SHARDING_THRESHOLD, type DirectoryLink } from '../../server/gateway/folder-cid.ts'
import { buildFileDag } from '../../server/gateway/content/unixfs-dag.ts'
import { chunksOf, kuboDeterministic } from './content/helpers.ts'
import { describeEachStore } from '../helpers/stores.ts'

const discard = { put: async <T>(cid: T) => cid }

/** The folder's DAG from the namespace as /file-info reads it: everything below in one query. */
const folderOf = async (ns: Namespace, path: string) => folderDag(await ns.descendants(path), path)

// Run on both stores: PostgreSQL must list and range-scan paths byte-wise as SQLite does.
describeEachStore('folder CIDs from the namespace', ({ open }) => {
  async function tree(files: Record<string, string>, dirs: string[] = []) {
    const ns = await createNamespace(await open('gateway'))
    for (const d of dirs) await ns.makeDir(d)
    for (const [path, text] of Object.entries(files)) {
      const bytes = Buffer.from(text)
      const dag = await buildFileDag(chunksOf(bytes), discard)
      await ns.putFile(path, { cid: dag.cid, size: bytes.length, dagSize: dag.dagSize })
    }
    return ns
  }

  describe('folder CIDs (kubo `ipfs add -r --cid-version=1`)', () => {
    it('matches kubo sharness t0114 testdirlisting', async () => {
      // kubo test/sharness/t0114-gateway-subdomains/README.md (ipfs 0.18.1):
      // DIR_CID=bafybeiht6dtwk3les7vqm6ibpvz6qpohidvlshsfyr7l5mpysdw2vmbbhe
      const ns = await tree(
        {
          '/testdirlisting/hello': 'hello\n',
          '/testdirlisting/ipfs/ipns/bar': 'text-file-content\n',
          '/testdirlisting/api/file.txt': 'I am a txt file\n',
          '/testdirlisting/ipfs/file.txt': 'I am a txt file\n',
        },
        ['/testdirlisting', '/testdirlisting/ipfs', '/testdirlisting/ipfs/ipns', '/testdirlisting/api'],
      )
      expect((await folderOf(ns, '/testdirlisting')).cid).toBe('bafybeiht6dtwk3les7vqm6ibpvz6qpohidvlshsfyr7l5mpysdw2vmbbhe')
    })

    it('matches kubo sharness t0122 rootDir with UTF-8 names', async () => {
      // kubo test/sharness/t0122-gateway-tar/README.md (ipfs 0.18.1):
      // DIR_CID=bafybeig6ka5mlwkl4subqhaiatalkcleo4jgnr3hqwvpmsqfca27cijp3i
      // FILE_CID=bafkreialihlqnf5uwo4byh4n3cmwlntwqzxxs2fg5vanqdi3d7tb2l5xkm (34 bytes)
      const ns = await tree(
        {
          '/rootDir/ą/ę/file-źł.txt': 'I am a txt file on path with utf8\n',
          '/rootDir/api/file.txt': 'I am a txt file in confusing /api dir\n',
          '/rootDir/ipfs/file.txt': 'I am a txt file in confusing /ipfs dir\n',
          '/rootDir/ipns/file.txt': 'I am a txt file in confusing /ipns dir\n',
        },
        ['/rootDir', '/rootDir/ipfs', '/rootDir/ipns', '/rootDir/api', '/rootDir/ą', '/rootDir/ą/ę'],
      )
      expect((await ns.get('/rootDir/ą/ę/file-źł.txt'))?.cid).toBe('bafkreialihlqnf5uwo4byh4n3cmwlntwqzxxs2fg5vanqdi3d7tb2l5xkm')
      expect((await folderOf(ns, '/rootDir')).cid).toBe('bafybeig6ka5mlwkl4subqhaiatalkcleo4jgnr3hqwvpmsqfca27cijp3i')
    })

    it('gives the empty folder the well-known empty directory CID', async () => {
      // kubo test/cli/cid_profiles_test.go / js-ipfs-unixfs ipip-499-profiles.spec.ts: empty directory, CIDv1.
      expect((await directoryDag([])).cid).toBe('bafybeiczsscdsbs7ffqz55asqdf3smv6klcw3gofszvwlyarci47bgf354')
    })

    it('changes when a file below changes', async () => {
      const ns = await tree({ '/d/a.txt': 'one' }, ['/d'])
      const before = (await folderOf(ns, '/d')).cid
      await ns.putFile('/d/a.txt', { cid: (await buildFileDag(chunksOf(Buffer.from('two')), discard)).cid, size: 3, dagSize: 3 })
      expect((await folderOf(ns, '/d')).cid).not.toBe(before)
    })
  })
})

/** A one-chunk file as kubo adds it with --cid-version=1: a raw leaf. */
async function rawFile(name: string, text: string): Promise<DirectoryLink> {
  const bytes = Buffer.from(text)
  return { name, cid: CID.createV1(raw.code, await sha256.digest(bytes)).toString(), dagSize: bytes.length }
}

/** A one-chunk file as kubo adds it by default (CIDv0): a dag-pb UnixFS file node holding the bytes. */
async function v0File(name: string, text: string): Promise<DirectoryLink> {
  const bytes = Buffer.from(text)
  const block = dagPb.encode(dagPb.prepare({ Data: new UnixFS({ type: 'file', data: bytes }).marshal(), Links: [] }))
  return { name, cid: CID.createV0(await sha256.digest(block)).toString(), dagSize: block.length }
}

async function last<T>(items: AsyncIterable<T>): Promise<T | undefined> {
  let found: T | undefined
  for await (const item of items) found = item
  return found
}

const seq = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

describe('large folders: HAMT-sharded like kubo', () => {
  // kubo test/sharness/t0260-sharding.sh: `echo $i > <name>` for each i.
  it("matches kubo's flat 100-file folder (CIDv0, below the threshold)", async () => {
    const links = await Promise.all(seq(100).map((i) => v0File(`file${i}`, `${i}\n`)))
    expect((await directoryDag(links, { profile: 'unixfs-v0-2015' })).cid).toBe('QmZedLGyvgWiyGQzAw2GpuLZeqzxmVcUQUbyRkVWx5DkxK')
  })

  it("shards a folder whose links pass 256 KiB exactly as ipfs-unixfs-importer does with kubo's profile", async () => {
    // kubo's own 6500-file vector in t0260 was marked unconfirmed (and is the flat CID), so the
    // cross-check here is the JS importer, which is interop-tested against kubo.
    const names = seq(6500).map((i) => `file${String(i).padStart(6, '0')}`)
    const links = await Promise.all(names.map((name, i) => v0File(name, `${i + 1}\n`)))
    expect(links.reduce((sum, l) => sum + l.name.length + 34, 0)).toBeGreaterThanOrEqual(HAMT_SHARDING_THRESHOLD)
    const files = names.map((name, i) => ({ path: `big_dir/${name}`, content: Buffer.from(`${i + 1}\n`) }))
    const imported = await last(importer(files, discard as never, { profile: 'unixfs-v0-2015' }))
    const ours = await directoryDag(links, { profile: 'unixfs-v0-2015' })
    expect(ours.cid).toBe(imported!.cid.toString())
    expect(ours.cid).toBe('QmUj4SSHNz27z9t6DtZJiR56r17BWqwMrWCzBcR6hF2bq1')
    expect(UnixFS.unmarshal(dagPb.decode(ours.bytes).Data!).type).toBe('hamt-sharded-directory')
  })

  it("matches kubo's sharded 2000-file folder with CIDv1 raw leaves", async () => {
    // Sharded by configuration in kubo's test (SHARDEDV1, the same CID in base58 and base32 across kubo versions).
    const links = await Promise.all(seq(2000).map((i) => rawFile(`file${i}`, `${i}\n`)))
    expect((await directoryDag(links, { shardThreshold: 0 })).cid).toBe('bafybeibiemewfzzdyhq2l74wrd6qj2oz42usjlktgnlqv4yfawgouaqn4u')
  })

  it("shards from exactly the threshold under kubo-cid-v1 (links-bytes, boxo's >=), and not one byte below", async () => {
    // 36-byte CIDv1 raw CIDs: names sized so that the estimate lands exactly on 256 KiB.
    const names = (pad: number) => seq(4096).map((i) => `f${String(i).padStart(pad, '0')}`)
    const at = await Promise.all(names(27).map((n, i) => rawFile(n, `${i}`)))
    expect(at.reduce((sum, l) => sum + Buffer.byteLength(l.name) + 36, 0)).toBe(HAMT_SHARDING_THRESHOLD)
    const below = [...at.slice(0, -1), { ...at.at(-1)!, name: at.at(-1)!.name.slice(1) }]
    const kind = async (links: DirectoryLink[]) =>
      UnixFS.unmarshal(dagPb.decode((await directoryDag(links, { profile: 'kubo-cid-v1' })).bytes).Data!).type
    expect(await kind(at)).toBe('hamt-sharded-directory')
    expect(await kind(below)).toBe('directory')
  })

  it('hands out every directory node of a sharded folder (root, sub-shards, sub-folders) so all can be stored', async () => {
    const links = await Promise.all(seq(2000).map((i) => rawFile(`file${i}`, `${i}\n`)))
    const sub = await directoryDag([links[0]])
    const dag = await directoryDag([...links, { name: 'sub', cid: sub.cid, dagSize: sub.dagSize }], { shardThreshold: 0 }, sub.nodes)
    const stored = new Map(dag.nodes.map((n) => [n.cid, n.bytes]))
    expect(stored.get(dag.cid)).toEqual(dag.bytes)
    // Walk the DAG from the root through the stored nodes alone: every link is a stored node or a file.
    const fileCids = new Set(links.map((l) => l.cid))
    const walk = (cid: string): number => {
      const bytes = stored.get(cid)
      if (!bytes) {
        expect(fileCids.has(cid)).toBe(true)
        return 1
      }
      return dagPb.decode(bytes).Links.reduce((n, l) => n + walk(l.Hash.toString()), 0)
    }
    expect(walk(dag.cid)).toBe(2001)
    expect(dag.nodes.length).toBeGreaterThan(2)
  })
})

/**
 * Kubo's createDeterministicFiles (test/cli/add_test.go): names are
 * consecutive slices of the first MiB of the seed's DeterministicRandomReader
 * stream, each byte mapped onto this 39-character alphabet; every file holds "x".
 */
async function deterministicNames(seed: string, count: number, nameLength: number, lastNameLength: number): Promise<string[]> {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz01234567890-_'
  let stream = ''
  for await (const chunk of kuboDeterministic(1 << 20, seed)) for (const b of chunk) stream += alphabet[b % alphabet.length]
  const names: string[] = []
  for (let i = 0, at = 0; i < count; i++) {
    const length = i === count - 1 ? lastNameLength : nameLength
    names.push(stream.slice(at, at + length))
    at += length
  }
  return names
}

describe('IPIP-499 HAMT thresholds (kubo test/cli/cid_profiles_test.go, ipfs/specs ipip-0499.md)', () => {
  const x = Buffer.from('x')
  const linksOf = async (names: string[], profile: 'unixfs-v1-2025' | 'unixfs-v0-2015') => {
    const file = await buildFileDag(chunksOf(x), discard, profile)
    return names.map((name) => ({ name, cid: file.cid, dagSize: file.dagSize }))
  }
  const typeOf = (dag: { bytes: Uint8Array }) => UnixFS.unmarshal(dagPb.decode(dag.bytes).Data!).type

  it('unixfs-v1-2025: a directory whose node is exactly 256 KiB stays flat; one byte more is a HAMT', async () => {
    const names = await deterministicNames('hamt-unixfs-v1-2025', 4766, 11, 22)
    expect(names.slice(0, 3)).toEqual(['fvu7e4jzn1t', 'pq0th5pxd7u', 'y8gjv7f6t0w'])
    const at = await directoryDag(await linksOf([...names.slice(0, -1), names.at(-1)!.slice(0, 21)], 'unixfs-v1-2025'), {
      profile: 'unixfs-v1-2025',
    })
    expect(at.bytes.length).toBe(HAMT_SHARDING_THRESHOLD)
    expect(typeOf(at)).toBe('directory')
    expect(at.cid).toBe('bafybeic3h7rwruealwxkacabdy45jivq2crwz6bufb5ljwupn36gicplx4')
    const over = await directoryDag(await linksOf(names, 'unixfs-v1-2025'), { profile: 'unixfs-v1-2025' })
    expect(typeOf(over)).toBe('hamt-sharded-directory')
    expect(over.cid).toBe('bafybeiegvuterwurhdtkikfhbxcldohmxp566vpjdofhzmnhv6o4freidu')
  })

  it('unixfs-v0-2015: names and CIDs summing to exactly 256 KiB stay flat; one byte more is a HAMT', async () => {
    const at = await directoryDag(await linksOf(await deterministicNames('hamt-unixfs-v0-2015', 4096, 30, 30), 'unixfs-v0-2015'), {
      profile: 'unixfs-v0-2015',
    })
    expect(typeOf(at)).toBe('directory')
    expect(at.cid).toBe('QmX5GtRk3TSSEHtdrykgqm4eqMEn3n2XhfkFAis5fjyZmN')
    const over = await directoryDag(await linksOf(await deterministicNames('hamt-unixfs-v0-2015', 4033, 31, 31), 'unixfs-v0-2015'), {
      profile: 'unixfs-v0-2015',
    })
    expect(typeOf(over)).toBe('hamt-sharded-directory')
    expect(over.cid).toBe('QmeMiJzmhpJAUgynAcxTQYek5PPKgdv3qEvFsdV3XpVnvP')
  })

  it('both: the empty directory', async () => {
    expect((await directoryDag([], { profile: 'unixfs-v1-2025' })).cid).toBe('bafybeiczsscdsbs7ffqz55asqdf3smv6klcw3gofszvwlyarci47bgf354')
    expect((await directoryDag([], { profile: 'unixfs-v0-2015' })).cid).toBe('QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn')
  })
})

import { describe, expect, it } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import * as dagPb from '@ipld/dag-pb'
import { UnixFS } from 'ipfs-unixfs'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import * as Digest from 'multiformats/hashes/digest'
import { buildFileDag } from '../../../server/gateway/content/unixfs-dag.ts'
import { chunksOf, kuboDeterministic } from './helpers.ts'

const discard = { put: async (cid: CID) => cid }
const dagOf = (bytes: Uint8Array | string) =>
  buildFileDag(chunksOf(typeof bytes === 'string' ? Buffer.from(bytes) : bytes), discard, 'kubo-cid-v1')
const emptySource = async function* (): AsyncGenerator<Uint8Array> {}

describe('UnixFS file CIDs (kubo `ipfs add --cid-version=1`)', () => {
  it('"hello world" is a raw leaf', async () => {
    // kubo test/cli/add_test.go `shortStringCidV1` (cidv1 - raw - sha2-256).
    expect((await dagOf('hello world')).cid).toBe('bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e')
  })

  it('"hello\\n" matches kubo sharness t0114 fixtures', async () => {
    // kubo test/sharness/t0114-gateway-subdomains/README.md: CIDv1=$(echo hello | ipfs add --cid-version 1 -Q).
    const dag = await dagOf('hello\n')
    expect(dag.cid).toBe('bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am')
    expect(dag.dagSize).toBe(6)
  })

  it('the empty file is the empty raw block', async () => {
    // The raw CIDv1 of sha256("") (e3b0c442…b855); kubo's balanced builder emits one empty raw leaf.
    const dag = await buildFileDag(emptySource(), discard, 'kubo-cid-v1')
    expect(dag.cid).toBe('bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku')
    expect(dag.dagSize).toBe(0)
  })

  it('lays out 174 chunks in one node and 175 chunks in two levels, as kubo does', async () => {
    // kubo test/cli/add_test.go ("applies UnixFSChunker=size-262144 and UnixFSFileMaxLinks") and
    // test/cli/cid_profiles_test.go: 44544KiB / 44800KiB from seed "v0-seed" under the legacy
    // CIDv0 profile. Same chunker and balanced layout as our CIDv1 DAGs, only leaf encoding differs.
    const at = await buildFileDag(kuboDeterministic(44544 * 1024, 'v0-seed'), discard, 'unixfs-v0-2015')
    expect(at.cid).toBe('QmUbBALi174SnogsUzLpYbD4xPiBSFANF4iztWCsHbMKh2')
    const over = await buildFileDag(kuboDeterministic(44800 * 1024, 'v0-seed'), discard, 'unixfs-v0-2015')
    expect(over.cid).toBe('QmepeWtdmS1hHXx1oZXsPUv6bMrfRRKfZcoPPU4eEfjnbf')
  })

  it('builds a multi-chunk CIDv1 file exactly like an independently built raw-leaf dag-pb node', async () => {
    // 3 chunks: 2 × 256 KiB + 1000 bytes. Build the expected root by hand from the spec:
    // raw leaves (sha256), a UnixFS file node with blocksizes, links with Tsize = leaf length.
    const data = randomBytes(2 * 262_144 + 1000)
    const sizes = [262_144, 262_144, 1000]
    const links: dagPb.PBLink[] = []
    let offset = 0
    for (const s of sizes) {
      const leaf = data.subarray(offset, offset + s)
      offset += s
      const digest = Digest.create(0x12, createHash('sha256').update(leaf).digest())
      links.push({ Hash: CID.createV1(raw.code, digest), Name: '', Tsize: s })
    }
    const unixfs = new UnixFS({ type: 'file', blockSizes: sizes.map(BigInt) })
    const rootBytes = dagPb.encode({ Data: unixfs.marshal(), Links: links })
    const expected = CID.createV1(dagPb.code, Digest.create(0x12, createHash('sha256').update(rootBytes).digest()))

    const dag = await dagOf(data)
    expect(dag.cid).toBe(expected.toString())
    expect(dag.dagSize).toBe(rootBytes.length + data.length)
  })

  it('does not depend on how the input is split into chunks', async () => {
    const data = randomBytes(600_000)
    const a = await buildFileDag(chunksOf(data, 1000), discard, 'kubo-cid-v1')
    const b = await buildFileDag(chunksOf(data, 300_000), discard, 'kubo-cid-v1')
    expect(a.cid).toBe(b.cid)
  })
})

/**
 * IPIP-499's profiles against the published vectors: kubo
 * test/cli/cid_profiles_test.go (kubo#11148), the same CIDs in ipfs/specs
 * src/ipips/ipip-0499.md "Test fixtures" and js-ipfs-unixfs
 * packages/ipfs-unixfs-importer/test/ipip-499-profiles.spec.ts. Inputs are
 * kubo's DeterministicRandomReader streams (kuboDeterministic); the 0-byte
 * CIDs are kubo test/sharness/t0040-add-and-cat.sh's.
 */
describe('IPIP-499 CID profiles, from 0 bytes to past the link limit', () => {
  const MiB = 1_048_576
  const KiB256 = 262_144
  const cases: { profile: 'unixfs-v1-2025' | 'unixfs-v0-2015'; name: string; source: () => AsyncIterable<Uint8Array>; cid: string }[] = [
    {
      profile: 'unixfs-v1-2025',
      name: 'the empty file',
      source: emptySource,
      cid: 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku',
    },
    {
      profile: 'unixfs-v1-2025',
      name: '"hello world"',
      source: () => chunksOf(Buffer.from('hello world')),
      cid: 'bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e',
    },
    {
      profile: 'unixfs-v1-2025',
      name: 'exactly one 1 MiB chunk',
      source: () => kuboDeterministic(MiB, 'chunk-v1-seed'),
      cid: 'bafkreiacndfy443ter6qr2tmbbdhadvxxheowwf75s6zehscklu6ezxmta',
    },
    {
      profile: 'unixfs-v1-2025',
      name: 'one byte over a chunk',
      source: () => kuboDeterministic(MiB + 1, 'chunk-v1-seed'),
      cid: 'bafybeigmix7t42i6jacydtquhet7srwvgpizfg7gjbq7627d35mjomtu64',
    },
    {
      profile: 'unixfs-v1-2025',
      name: 'exactly 1 024 links (1 GiB)',
      source: () => kuboDeterministic(1024 * MiB, 'v1-2025-seed'),
      cid: 'bafybeihmf37wcuvtx4hpu7he5zl5qaf2ineo2lqlfrapokkm5zzw7zyhvm',
    },
    {
      profile: 'unixfs-v1-2025',
      name: 'one byte over 1 024 links (two levels)',
      source: () => kuboDeterministic(1024 * MiB + 1, 'v1-2025-seed'),
      cid: 'bafybeibdsi225ugbkmpbdohnxioyab6jsqrmkts3twhpvfnzp77xtzpyhe',
    },
    { profile: 'unixfs-v0-2015', name: 'the empty file', source: emptySource, cid: 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH' },
    {
      profile: 'unixfs-v0-2015',
      name: '"hello world"',
      source: () => chunksOf(Buffer.from('hello world')),
      cid: 'Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD',
    },
    {
      profile: 'unixfs-v0-2015',
      name: 'exactly one 256 KiB chunk',
      source: () => kuboDeterministic(KiB256, 'chunk-v0-seed'),
      cid: 'QmWmRj3dFDZdb6ABvbmKhEL6TmPbAfBZ1t5BxsEyJrcZhE',
    },
    {
      profile: 'unixfs-v0-2015',
      name: 'one byte over a chunk',
      source: () => kuboDeterministic(KiB256 + 1, 'chunk-v0-seed'),
      cid: 'QmYyLxtzZyW22zpoVAtKANLRHpDjZtNeDjQdJrcQNWoRkJ',
    },
    {
      profile: 'unixfs-v0-2015',
      name: 'one byte over 174 links (two levels)',
      source: () => kuboDeterministic(174 * KiB256 + 1, 'v0-seed'),
      cid: 'QmV81WL765sC8DXsRhE5fJv2rwhS4icHRaf3J9Zk5FdRnW',
    },
  ]
  for (const c of cases) {
    it(`${c.profile}: ${c.name}`, async () => {
      expect((await buildFileDag(c.source(), discard, c.profile)).cid).toBe(c.cid)
    })
  }
})

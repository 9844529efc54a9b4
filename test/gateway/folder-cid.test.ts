import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../server/shared/db.ts'
import { createNamespace } from '../../server/gateway/namespace.ts'
import { directoryDag, folderDag } from '../../server/gateway/folder-cid.ts'
import { buildFileDag } from '../../server/gateway/content/unixfs-dag.ts'
import { chunksOf } from './content/helpers.ts'

const discard = { put: async <T>(cid: T) => cid }

async function tree(files: Record<string, string>, dirs: string[] = []) {
  const ns = createNamespace(openDatabase(':memory:'))
  for (const d of dirs) ns.makeDir(d)
  for (const [path, text] of Object.entries(files)) {
    const bytes = Buffer.from(text)
    const dag = await buildFileDag(chunksOf(bytes), discard)
    ns.putFile(path, { cid: dag.cid, size: bytes.length, dagSize: dag.dagSize })
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
    expect((await folderDag(ns, '/testdirlisting')).cid).toBe('bafybeiht6dtwk3les7vqm6ibpvz6qpohidvlshsfyr7l5mpysdw2vmbbhe')
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
    expect(ns.get('/rootDir/ą/ę/file-źł.txt')?.cid).toBe('bafkreialihlqnf5uwo4byh4n3cmwlntwqzxxs2fg5vanqdi3d7tb2l5xkm')
    expect((await folderDag(ns, '/rootDir')).cid).toBe('bafybeig6ka5mlwkl4subqhaiatalkcleo4jgnr3hqwvpmsqfca27cijp3i')
  })

  it('gives the empty folder the well-known empty directory CID', async () => {
    // kubo test/cli/cid_profiles_test.go / js-ipfs-unixfs ipip-499-profiles.spec.ts: empty directory, CIDv1.
    expect((await directoryDag([])).cid).toBe('bafybeiczsscdsbs7ffqz55asqdf3smv6klcw3gofszvwlyarci47bgf354')
  })

  it('changes when a file below changes', async () => {
    const ns = await tree({ '/d/a.txt': 'one' }, ['/d'])
    const before = (await folderDag(ns, '/d')).cid
    ns.putFile('/d/a.txt', { cid: (await buildFileDag(chunksOf(Buffer.from('two')), discard)).cid, size: 3, dagSize: 3 })
    expect((await folderDag(ns, '/d')).cid).not.toBe(before)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { aliceAuth, postMetadata, startBridgeOnRealGateway } from './helpers.ts'

/**
 * Names a person really gives files: the metadata route takes `filePath` as
 * the Files app shows it (never URL-decoded again), WebDAV URLs are decoded
 * exactly once, and Unicode meets in NFC whichever form a client sent (macOS
 * sends NFD), as in Nextcloud.
 */
const NAMES = [
  '100%41.txt',
  '100A.txt',
  '%25 literal.txt',
  'a%2Fb.txt',
  'one+two.txt',
  'issue #7.txt',
  'why?.txt',
  'two  spaces .txt',
  'R\u00e9sum\u00e9 NFC.txt',
  'Cafe\u0301 NFD.txt',
]
const nfc = (name: string) => name.normalize('NFC')

describe('file names with %, +, #, ?, spaces and Unicode', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  const dav = (name: string) => `${t.url}/remote.php/dav/files/alice/names/${encodeURIComponent(name)}`
  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
    expect(
      (await fetch(`${t.url}/remote.php/dav/files/alice/names`, { method: 'MKCOL', headers: { authorization: aliceAuth } })).status,
    ).toBe(201)
    for (const name of NAMES) {
      const res = await fetch(dav(name), { method: 'PUT', headers: { authorization: aliceAuth }, body: `content of ${name}` })
      expect(res.status, name).toBe(201)
    }
  })
  afterAll(() => t.close())

  it('lists each name once, as uploaded (in NFC)', async () => {
    const res = await fetch(`${t.url}/remote.php/dav/files/alice/names/`, {
      method: 'PROPFIND',
      headers: { authorization: aliceAuth, depth: '1' },
    })
    const hrefs = [...(await res.text()).matchAll(/<d:href>([^<]*)<\/d:href>/g)].map((m) =>
      decodeURIComponent(m[1].replace(/^.*\/names\//, '')),
    )
    expect(hrefs.filter((h) => h !== '').sort()).toEqual(NAMES.map(nfc).sort())
  })

  it('reads each file back by its name, the NFD form of a name included', async () => {
    for (const name of NAMES) {
      const res = await fetch(dav(name.normalize('NFD')), { headers: { authorization: aliceAuth } })
      expect(await res.text(), name).toBe(`content of ${name}`)
    }
  })

  it("answers the metadata route for the literal path with that file's own record", async () => {
    const cids = new Set<string>()
    for (const name of NAMES) {
      for (const form of [name, name.normalize('NFD'), name.normalize('NFC')]) {
        const res = await postMetadata({ url: t.url, body: { filePath: `/names/${form}` } })
        expect(res.status, form).toBe(200)
        expect(res.body.metadata.file.file, form).toBe(nfc(name))
        cids.add(res.body.metadata.file.cid)
      }
    }
    // One CID per file: no name ever answered another file's record.
    expect(cids.size).toBe(NAMES.length)
  })
})

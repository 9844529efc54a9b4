/**
 * Every CID the gateway reports can be fetched from the network once its
 * groups are offloaded, a folder's too: its directory nodes are stored in
 * groups like file blocks, so the whole folder (directories, file DAGs,
 * bytes) comes back from the providers alone, every block checked against
 * its CID.
 */
import * as dagPb from '@ipld/dag-pb'
import { UnixFS } from 'ipfs-unixfs'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { blockMatchesCid } from '../../../server/gateway/content/verify-block.ts'
import { startDealStack, type DealStack } from './harness.ts'

let stack: DealStack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

const details = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file

/** Fetches one block from whichever provider of the gateway's deals serves it; never from the gateway. */
async function fromProviders(s: DealStack, cid: CID): Promise<Uint8Array> {
  const pieces = (await s.gateway.content.groups()).flatMap((g) =>
    g.deals.filter((d) => d.state === 'active').map((d) => ({ provider: d.provider, pieceCid: g.pieceCid! })),
  )
  for (const { provider, pieceCid } of pieces) {
    const bytes = await s.sim.retrieveBlock(provider, pieceCid, cid.toString()).catch(() => undefined)
    if (bytes && (await blockMatchesCid(cid.toString(), bytes))) return bytes
  }
  throw new Error(`no provider serves ${cid}`)
}

/** Rebuilds a UnixFS folder from its CID: path → file bytes. */
async function exportFolder(s: DealStack, cid: CID, prefix = ''): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>()
  const node = dagPb.decode(await fromProviders(s, cid))
  expect(UnixFS.unmarshal(node.Data!).type).toBe('directory')
  for (const link of node.Links) {
    const path = `${prefix}/${link.Name}`
    const child = await fromProviders(s, link.Hash)
    if (link.Hash.code === dagPb.code && UnixFS.unmarshal(dagPb.decode(child).Data!).type === 'directory') {
      for (const [p, b] of await exportFolder(s, link.Hash, path)) out.set(p, b)
    } else {
      out.set(path, await fileBytes(s, link.Hash, child))
    }
  }
  return out
}

async function fileBytes(s: DealStack, cid: CID, bytes: Uint8Array): Promise<Buffer> {
  if (cid.code === raw.code) return Buffer.from(bytes)
  const parts: Buffer[] = []
  for (const link of dagPb.decode(bytes).Links) parts.push(await fileBytes(s, link.Hash, await fromProviders(s, link.Hash)))
  return Buffer.concat(parts)
}

describe('folder CIDs on the network', () => {
  it('fetches a reported folder, with its sub-folders and files, back from the providers alone once it is offloaded', async () => {
    const s = (stack = await startDealStack({ copies: 2 }))
    const files = new Map([
      ['/a.txt', randomBytes(100)],
      ['/sub/b.bin', randomBytes(700_000)],
      ['/sub/c.txt', Buffer.from('hello folder\n')],
    ])
    for (const dir of ['/proj', '/proj/sub']) expect((await fetch(`${s.gatewayServer.url}${dir}`, { method: 'MKCOL' })).status).toBe(201)
    for (const [path, bytes] of files) expect((await s.put(`/proj${path}`, bytes)).status).toBe(201)

    const reported = (await details(s, '/proj')).cid
    await s.seal({ folders: true })
    expect(await s.runUntil(async () => (await details(s, '/proj')).details.state === 'offloaded')).toBe(true)
    // The folder kept its CID, and nothing is left on the gateway's disk.
    expect((await details(s, '/proj')).cid).toBe(reported)
    expect(readdirSync(join(s.dir, 'gateway', 'groups'))).toEqual([])

    const back = await exportFolder(s, CID.parse(reported))
    expect([...back.keys()].sort()).toEqual([...files.keys()].sort())
    for (const [path, bytes] of files) expect(back.get(path)!.equals(bytes)).toBe(true)
  })
})

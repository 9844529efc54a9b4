import { randomBytes } from 'node:crypto'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { remoteBlocks } from '../../../server/gateway/content/remote-blocks.ts'
import type { GroupRecord, RemoteCopy } from '../../../server/gateway/content/types.ts'

const silent = pino({ level: 'silent' })
const group = { id: 7, state: 'offloaded', size: 0, retrievableCopies: 2, deals: [], createdMs: 0, updatedMs: 0 } as GroupRecord

/** Three raw leaves as a provider would hold them, by CID. */
async function leaves() {
  const out = new Map<string, Uint8Array>()
  for (let i = 0; i < 3; i++) {
    const bytes = new Uint8Array(randomBytes(1000 + i))
    out.set(CID.create(1, raw.code, await sha256.digest(bytes)).toString(), bytes)
  }
  return out
}

/** A provider's copy that answers each block with `answer` and logs what it was asked. */
function copy(
  provider: string,
  answer: (bytes: Uint8Array) => Uint8Array | Promise<never>,
  blocks: Map<string, Uint8Array>,
  asked: string[],
): RemoteCopy {
  return {
    provider,
    fetch: () => {
      throw new Error('a read never fetches a whole piece')
    },
    block: async (cid) => {
      asked.push(provider)
      return answer(blocks.get(cid)!)
    },
  }
}

const flip = (b: Uint8Array) => {
  const c = new Uint8Array(b)
  c[c.length >> 1] ^= 1
  return c
}

describe('remote blocks of an offloaded group', () => {
  it('takes each block from the first provider that sends it intact; one that lied or failed is asked last afterwards', async () => {
    const blocks = await leaves()
    const asked: string[] = []
    const copies = [
      copy('liar', flip, blocks, asked),
      copy('down', () => Promise.reject(new Error('503')), blocks, asked),
      copy('honest', (b) => b, blocks, asked),
    ]
    const r = remoteBlocks({
      source: { sources: async () => copies },
      group: async () => group,
      logger: silent,
      signal: new AbortController().signal,
    })
    await r.prepare([7])
    for (const [cid, bytes] of blocks) expect(Buffer.from(await r.block(7, cid, bytes.length)).equals(bytes)).toBe(true)
    // Block 1: liar, down, honest. Then honest is first: it alone is asked for blocks 2 and 3.
    expect(asked).toEqual(['liar', 'down', 'honest', 'honest', 'honest'])
  })

  it('refuses a block of the right hash but the wrong length for the leaf, and fails 503 CONTENT_UNAVAILABLE when nobody sends it intact', async () => {
    const blocks = await leaves()
    const asked: string[] = []
    const r = remoteBlocks({
      source: { sources: async () => [copy('liar', flip, blocks, asked)] },
      group: async () => group,
      logger: silent,
      signal: new AbortController().signal,
    })
    const [cid, bytes] = [...blocks][0]
    await expect(r.block(7, cid, bytes.length)).rejects.toMatchObject({ status: 503, code: 'CONTENT_UNAVAILABLE' })
    const honest = remoteBlocks({
      source: { sources: async () => [copy('honest', (b) => b, blocks, asked)] },
      group: async () => group,
      logger: silent,
      signal: new AbortController().signal,
    })
    // The index says the leaf is longer than what hashes to the CID: not our block.
    await expect(honest.block(7, cid, bytes.length + 1)).rejects.toMatchObject({ code: 'CONTENT_UNAVAILABLE' })
  })

  it('fails before any fetch when a group has no provider to ask', async () => {
    const r = remoteBlocks({
      source: { sources: async () => [] },
      group: async () => group,
      logger: silent,
      signal: new AbortController().signal,
    })
    await expect(r.prepare([7])).rejects.toMatchObject({ status: 503, code: 'CONTENT_UNAVAILABLE' })
    const none = remoteBlocks({ source: undefined, group: async () => group, logger: silent, signal: new AbortController().signal })
    await expect(none.prepare([7])).rejects.toMatchObject({ code: 'CONTENT_UNAVAILABLE' })
  })
})

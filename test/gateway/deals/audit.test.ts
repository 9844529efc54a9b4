import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import * as dagCbor from '@ipld/dag-cbor'
import { afterAll, describe, expect, it } from 'vitest'
import { encodeDealProposal } from '../../../server/network/boost/wire.ts'
import { verifySignature } from '../../../server/network/wallet/keys.ts'
import { chainCid } from '../../../server/network/wallet/message.ts'
import { startDealStack, type DealStack } from './harness.ts'

const run = promisify(execFile)
let stack: DealStack | undefined
afterAll(async () => {
  await stack?.close()
})

/** `npm run deals -- …` against the stack's data directory. */
async function deals(s: DealStack, ...args: string[]) {
  return run(process.execPath, ['--import', 'tsx', 'scripts/deals.ts', ...args], {
    env: { ...process.env, DATA_DIR: s.dir, ...(s.databaseUrl && { DATABASE_URL: s.databaseUrl }) },
  })
}

describe('npm run deals: the audit trail of every deal', () => {
  it('lists each deal with the signed proposal as sent, its CID, the provider’s answer and its history', async () => {
    const s = (stack = await startDealStack({ copies: 2 }))
    expect((await s.put('/audit.bin', randomBytes(200_000))).status).toBe(201)
    await s.seal()
    const activeCount = async () =>
      (await s.fileInfo('/audit.bin')).result.file.details.groups[0].deals.filter((d: { state: string }) => d.state === 'active').length
    expect(await s.runUntil(async () => (await activeCount()) >= 2)).toBe(true)

    const listed = JSON.parse((await deals(s, 'list', '--json')).stdout)
    const active = listed.filter((d: { state: string }) => d.state === 'active')
    expect(active.length).toBeGreaterThanOrEqual(2)
    for (const d of active) {
      // The bytes are the market ClientDealProposal [proposal, signature] the provider received.
      const bytes = Uint8Array.from(Buffer.from(d.signedProposal, 'base64'))
      expect(chainCid(bytes).toString()).toBe(d.proposalCid)
      const [tuple, signature] = dagCbor.decode(bytes) as [unknown[], Uint8Array]
      // It is the deal on chain (where the client shows as its ID address), signed by the wallet key.
      const onChain = (await s.simnet.getDeal(d.dealId))!.proposal
      expect(dagCbor.encode(tuple)).toEqual(encodeDealProposal({ ...onChain, Client: s.clientAddress }))
      expect(verifySignature(s.clientAddress, dagCbor.encode(tuple), { type: 1, data: signature.subarray(1) })).toBe(true)
      expect(d.providerAnswer).toBe('accepted')
      expect(d.tokenHash).toBeUndefined()
      expect(d.events.map((e: { state: string }) => e.state)).toEqual(['proposing', 'proposed', 'published', 'active'])
      const times = d.events.map((e: { atMs: number }) => e.atMs)
      expect([...times].sort((a, b) => a - b)).toEqual(times)
    }

    const shown = (await deals(s, 'show', active[0].proposalId)).stdout
    expect(shown).toContain(active[0].proposalCid)
    expect(shown).toContain('history')
    expect(shown).toMatch(/published \(deal \d+\)/)

    const ofGroup = JSON.parse((await deals(s, 'list', '--group', String(active[0].groupId), '--json')).stdout)
    expect(ofGroup.length).toBe(listed.filter((d: { groupId: number }) => d.groupId === active[0].groupId).length)
    expect(JSON.parse((await deals(s, 'list', '--group', '999', '--json')).stdout)).toEqual([])
  })

  it('says what is wrong, with exit status 2, for an unknown deal or a bad option', async () => {
    const s = stack!
    await expect(deals(s, 'show', '00000000-0000-0000-0000-000000000000')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no deal with UUID'),
    })
    await expect(deals(s, 'list', '--group', 'x')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--group takes a group number'),
    })
    await expect(deals(s, 'frobnicate')).rejects.toMatchObject({ code: 2 })
    expect((await deals(s, '--help')).stdout).toContain('npm run deals')
  })
})

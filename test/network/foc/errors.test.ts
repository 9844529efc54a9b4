/**
 * A failure of the Onchain Cloud's RPC is the chain node's, never the PDP
 * provider's the SDK was working with: an outage must not get a provider
 * excluded (issue 39). The errors are viem's and the Synapse SDK's own classes.
 */
import { StoreError } from '@filoz/synapse-sdk'
import { calibration } from '@filoz/synapse-core/chains'
import { createServer } from 'node:net'
import { HttpRequestError } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { NetworkError } from '../../../server/network/errors.ts'
import { createFocClient } from '../../../server/network/foc/client.ts'
import { focNetworkError } from '../../../server/network/foc/errors.ts'

const RPC = 'http://127.0.0.1:1235/rpc/v1'
const refused = (port: number) => Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { address: '127.0.0.1', port })

describe("the Onchain Cloud client's errors", () => {
  it("names the chain's node, and no provider, when an upload's add fails on the RPC", () => {
    const cause = new HttpRequestError({ url: RPC, body: {}, cause: refused(1235) })
    const err = focNetworkError(new StoreError('Failed to add pieces', { providerId: 2n, cause }), RPC) as NetworkError
    expect(err).toMatchObject({ code: 'UNREACHABLE', chainNode: true, provider: undefined })
    expect(err.message).toMatch(/^the Onchain Cloud's RPC \(http:\/\/127\.0\.0\.1:1235\) did not answer/)
  })

  it("still blames the provider when it is the provider's address that refused", () => {
    const err = focNetworkError(new StoreError('Failed to upload', { providerId: 2n, cause: refused(4703) }), RPC) as NetworkError
    expect(err).toMatchObject({ code: 'UNREACHABLE', chainNode: false, provider: '2' })
  })

  it('says so from a real client whose RPC port refuses connections', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number }
        s.close(() => resolve(port))
      })
    })
    const rpcUrl = `http://127.0.0.1:${closed}/rpc/v1`
    const chain = { ...calibration, rpcUrls: { default: { http: [rpcUrl] } } }
    const client = createFocClient({ chain, account: privateKeyToAccount(generatePrivateKey()), rpcTimeoutMs: 5_000 })
    const err = await client.account().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(NetworkError)
    expect(err).toMatchObject({ code: 'UNREACHABLE', chainNode: true })
  })
})

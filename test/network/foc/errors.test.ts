/**
 * A failure of the Onchain Cloud's RPC is the chain node's, never the PDP
 * provider's the SDK was working with: an outage must not get a provider
 * excluded (issue 39). A revert is the contract's answer, never an outage
 * (issue 44): read by name from GA's errors. The errors are viem's and the
 * Synapse SDK's own classes, built as they build them.
 */
import { StoreError } from '@filoz/synapse-sdk'
import { createServer } from 'node:net'
import {
  CallExecutionError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  encodeErrorResult,
  HttpRequestError,
  parseAbi,
  RpcRequestError,
  type Abi,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { NetworkError } from '../../../server/network/errors.ts'
import { fwssViewAbi, onchainCloudErrorsAbi } from '../../../server/network/foc/abi.ts'
import { connectFocClient } from '../../../server/network/foc/client.ts'
import { focNetworkError } from '../../../server/network/foc/errors.ts'
import { PUBLISHED_ANCHORS } from '../../../server/network/foc/published.ts'

const RPC = 'http://127.0.0.1:1235/rpc/v1'
const refused = (port: number) => Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { address: '127.0.0.1', port })
const VIEW = '0x00000000000000000000000000000000000000a1'

/** What viem throws for an eth_call the node answered with a revert (code 3 and the revert's data), as readContract wraps it. */
function reverted(abi: Abi, functionName: string, data: `0x${string}`) {
  const rpc = new RpcRequestError({ body: {}, url: RPC, error: { code: 3, message: 'execution reverted', data } })
  const cause = new ContractFunctionRevertedError({ abi, data, functionName })
  return new ContractFunctionExecutionError(new CallExecutionError(Object.assign(cause, { cause: rpc }), {}), {
    abi,
    functionName,
    contractAddress: VIEW,
  })
}

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

  it("reads a revert as the contract's answer, by its GA error name and arguments, though the node answered through the RPC", () => {
    const data = encodeErrorResult({
      abi: onchainCloudErrorsAbi,
      errorName: 'InsufficientLockupFunds',
      args: ['0x00000000000000000000000000000000000000b2', 5n, 1n],
    })
    const nameOf = (a: string) => (a === VIEW ? "the warm storage service's view" : undefined)
    // The SDK's own ABI does not know GA's error: viem leaves it undecoded, the client still reads it.
    const sdkAbi = parseAbi(['function getPriceList() view returns (uint256)'])
    const err = focNetworkError(reverted(sdkAbi, 'getPriceList', data), RPC, nameOf) as NetworkError
    expect(err).toMatchObject({ code: 'REJECTED_BY_CHAIN', chainNode: false })
    expect(err.revert).toEqual({
      contract: "the warm storage service's view",
      functionName: 'getPriceList',
      errorName: 'InsufficientLockupFunds',
      error: 'InsufficientLockupFunds(0x00000000000000000000000000000000000000b2, 5, 1)',
    })
    expect(err.message).toBe(
      "the warm storage service's view refused getPriceList(): InsufficientLockupFunds(0x00000000000000000000000000000000000000b2, 5, 1)",
    )
  })

  it('says a revert with no data is one, and gives the selector of an error no GA contract has', () => {
    // A pre-GA view has no getPriceList: the call reverts with nothing to decode.
    const none = focNetworkError(reverted(fwssViewAbi, 'getPriceList', '0x'), RPC) as NetworkError
    expect(none).toMatchObject({ code: 'REJECTED_BY_CHAIN', revert: { functionName: 'getPriceList', error: 'no reason given' } })
    const unknown = focNetworkError(reverted(fwssViewAbi, 'getPriceList', '0xdeadbeef00'), RPC) as NetworkError
    expect(unknown.revert?.error).toBe('an error this client does not know (selector 0xdeadbeef)')
  })

  it('says so when the node does not answer at all, from a client connecting to a port that refuses connections', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number }
        s.close(() => resolve(port))
      })
    })
    const { chainId, ...anchors } = PUBLISHED_ANCHORS.calibration
    const err = await connectFocClient({
      rpcUrl: `http://127.0.0.1:${closed}/rpc/v1`,
      anchors,
      chainIds: [chainId],
      account: privateKeyToAccount(generatePrivateKey()),
      rpcTimeoutMs: 5_000,
    }).catch((e: unknown) => e)
    expect(focNetworkError(err, `http://127.0.0.1:${closed}/rpc/v1`)).toMatchObject({ code: 'UNREACHABLE', chainNode: true })
  })
})

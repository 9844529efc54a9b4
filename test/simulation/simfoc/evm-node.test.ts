import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import solc from 'solc'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeDeployData,
  http,
  parseEther,
  type Abi,
  type Hex,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startEvmNode, SIMFOC_CHAIN_ID, type EvmNode } from '../../../server/simulation/simfoc/evm-node.ts'

// A contract that exercises what the FOC contracts need of the chain: storage, events,
// reverts with reasons, block.number as the epoch, and FEVM's beacon randomness precompile.
const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;
contract Probe {
  uint256 public stored;
  event Stored(address indexed by, uint256 value, uint256 epoch);
  function store(uint256 value) external payable {
    require(value != 13, "unlucky value");
    stored = value;
    emit Stored(msg.sender, value, block.number);
  }
  function epoch() external view returns (uint256, uint256) { return (block.number, block.timestamp); }
  function randomness(uint256 at) external view returns (bytes32) {
    (bool ok, bytes memory out) = address(0xfE00000000000000000000000000000000000006).staticcall(abi.encode(at));
    require(ok, "randomness refused");
    return abi.decode(out, (bytes32));
  }
}
contract Placed {
  address public immutable deployer;
  uint256 public seeded;
  constructor(uint256 value) { deployer = msg.sender; seeded = value; }
}`

function compileProbe(name = 'Probe'): { abi: Abi; bytecode: Hex } {
  const input = {
    language: 'Solidity',
    sources: { 'Probe.sol': { content: SOURCE } },
    settings: { evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input)))
  const probe = output.contracts['Probe.sol'][name]
  return { abi: probe.abi, bytecode: `0x${probe.evm.bytecode.object}` }
}

describe('the simulated FOC EVM node (eth JSON-RPC on loopback)', () => {
  let node: EvmNode
  let clockMs = 1_700_000_000_000
  const key = generatePrivateKey()
  const account = privateKeyToAccount(key)
  const probe = compileProbe()
  let address: Hex
  const chain = defineChain({
    id: SIMFOC_CHAIN_ID,
    name: 'simulated FOC',
    nativeCurrency: { name: 'Filecoin', symbol: 'FIL', decimals: 18 },
    rpcUrls: { default: { http: [] } },
  })
  let pub: ReturnType<typeof createPublicClient>
  let wallet: ReturnType<typeof createWalletClient>

  beforeAll(async () => {
    node = await startEvmNode({
      now: () => clockMs,
      epochSeconds: 30,
      genesisTimestamp: 1_700_000_000,
      seed: 'test',
      accounts: [{ address: account.address, wei: parseEther('100') }],
    })
    const transport = http(node.url)
    pub = createPublicClient({ chain: { ...chain, rpcUrls: { default: { http: [node.url] } } }, transport })
    wallet = createWalletClient({ chain: { ...chain, rpcUrls: { default: { http: [node.url] } } }, transport, account })
    clockMs += 30_000 * 5
  })
  afterAll(() => node.close())

  it('answers the chain id and the head epoch by the clock, block timestamps 30 s apart from genesis', async () => {
    expect(await pub.getChainId()).toBe(SIMFOC_CHAIN_ID)
    expect(await pub.getBlockNumber()).toBe(5n)
    const block = await pub.getBlock({ blockTag: 'latest' })
    expect(block.number).toBe(5n)
    expect(block.timestamp).toBe(BigInt(1_700_000_000 + 5 * 30))
    expect(block.baseFeePerGas).toBe(100n)
  })

  it('sped up, keeps block times on the wall clock (the SDK sets its deadlines by it), many epochs a second', async () => {
    let ms = 1_800_000_000_000
    const fast = await startEvmNode({ now: () => ms, epochSeconds: 0.1 })
    try {
      ms += 2_000
      const client = createPublicClient({ transport: http(fast.url) })
      expect(await client.getBlockNumber()).toBe(20n)
      expect((await client.getBlock({ blockTag: 'latest' })).timestamp).toBe(1_800_000_002n)
    } finally {
      await fast.close()
    }
  })

  it('deploys a contract from a signed transaction, executes calls and transactions, and reports logs', async () => {
    const hash = await wallet.deployContract({ abi: probe.abi, bytecode: probe.bytecode, account, chain: null })
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 10 })
    expect(receipt.status).toBe('success')
    address = receipt.contractAddress!
    expect((await pub.getCode({ address }))?.length).toBeGreaterThan(10)

    clockMs += 30_000
    const store = await wallet.writeContract({ address, abi: probe.abi, functionName: 'store', args: [42n], account, chain: null })
    const stored = await pub.waitForTransactionReceipt({ hash: store, pollingInterval: 10 })
    expect(stored.blockNumber).toBe(6n)
    expect(await pub.readContract({ address, abi: probe.abi, functionName: 'stored' })).toBe(42n)
    const events = await pub.getContractEvents({ address, abi: probe.abi, eventName: 'Stored', fromBlock: 0n, toBlock: 'latest' })
    expect(events).toHaveLength(1)
    expect(events[0].args).toEqual({ by: account.address, value: 42n, epoch: 6n })
    expect(await pub.readContract({ address, abi: probe.abi, functionName: 'epoch' })).toEqual([6n, BigInt(1_700_000_000 + 6 * 30)])
    // Gas was paid: the balance went down by what the receipts say.
    expect(await pub.getTransactionCount({ address: account.address })).toBe(2)
    const tx = await pub.getTransaction({ hash: store })
    expect(tx.from.toLowerCase()).toBe(account.address.toLowerCase())
    expect(tx.nonce).toBe(1)
  })

  it('reverts with the contract reason viem decodes, and leaves state as it was', async () => {
    const failure = await pub
      .simulateContract({ address, abi: probe.abi, functionName: 'store', args: [13n], account })
      .catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(BaseError)
    const reverted = (failure as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError
    expect(reverted.reason).toBe('unlucky value')
    expect(await pub.readContract({ address, abi: probe.abi, functionName: 'stored' })).toBe(42n)
    // A transaction sent anyway lands with status 0 and no logs, and costs its gas.
    const hash = await wallet.writeContract({
      address,
      abi: probe.abi,
      functionName: 'store',
      args: [13n],
      account,
      chain: null,
      gas: 200_000n,
    })
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 10 })
    expect(receipt.status).toBe('reverted')
    expect(receipt.logs).toEqual([])
  })

  it('estimates gas the same however warm the last call left storage, and never below what the transaction uses', async () => {
    const request = { address, abi: probe.abi, functionName: 'store', args: [77n], account } as const
    const cold = await pub.estimateContractGas(request)
    await pub.simulateContract(request)
    expect(await pub.estimateContractGas(request)).toBe(cold)
    const hash = await wallet.writeContract({ ...request, chain: null, gas: cold })
    const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 10 })
    expect(receipt.status).toBe('success')
    expect(receipt.gasUsed).toBeLessThanOrEqual(cold)
  })

  it('refuses a replayed transaction and a wrong nonce with JSON-RPC errors, not a crash', async () => {
    const request = await wallet.prepareTransactionRequest({ to: account.address, value: 1n, account, chain: null })
    const signed = await wallet.signTransaction({ ...request, account, chain: null } as never)
    await pub.request({ method: 'eth_sendRawTransaction', params: [signed] })
    await expect(pub.request({ method: 'eth_sendRawTransaction', params: [signed] })).rejects.toThrow(/already known|nonce too low/)
    const ahead = await wallet.signTransaction({ ...request, nonce: request.nonce + 5, account, chain: null } as never)
    await expect(pub.request({ method: 'eth_sendRawTransaction', params: [ahead] })).rejects.toThrow(/nonce too high/)
    await expect(pub.request({ method: 'eth_sendRawTransaction', params: ['0x1234'] })).rejects.toThrow(/invalid transaction/)
  })

  it('serves the beacon randomness precompile, the same for an epoch every time, and none for a future epoch', async () => {
    const a = await pub.readContract({ address, abi: probe.abi, functionName: 'randomness', args: [3n] })
    const b = await pub.readContract({ address, abi: probe.abi, functionName: 'randomness', args: [4n] })
    expect(a).toMatch(/^0x[0-9a-f]{64}$/)
    expect(a).not.toBe(b)
    expect(await pub.readContract({ address, abi: probe.abi, functionName: 'randomness', args: [3n] })).toBe(a)
    await expect(pub.readContract({ address, abi: probe.abi, functionName: 'randomness', args: [1_000n] })).rejects.toThrow(
      /randomness refused/,
    )
  })

  it('outlives a restart: its state file replays every change, receipts and logs included, and genesis funds are not given twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'simfoc-chain-'))
    let ms = 1_900_000_000_000
    const options = {
      now: () => ms,
      genesisTimestamp: 1_900_000_000,
      stateFile: join(dir, 'chain.sqlite'),
      accounts: [{ address: account.address, wei: parseEther('10') }],
    }
    try {
      const first = await startEvmNode(options)
      expect(first.fresh).toBe(true)
      const c = { ...chain, rpcUrls: { default: { http: [first.url] } } }
      const w = createWalletClient({ chain: c, transport: http(first.url), account })
      const p = createPublicClient({ chain: c, transport: http(first.url) })
      ms += 30_000
      const deployed = await p.waitForTransactionReceipt({
        hash: await w.deployContract({ abi: probe.abi, bytecode: probe.bytecode }),
        pollingInterval: 10,
      })
      ms += 60_000
      const stored = await w.writeContract({ address: deployed.contractAddress!, abi: probe.abi, functionName: 'store', args: [5n] })
      await p.waitForTransactionReceipt({ hash: stored, pollingInterval: 10 })
      const balance = await p.getBalance({ address: account.address })
      await first.close()

      ms += 30_000
      const second = await startEvmNode(options)
      expect(second.fresh).toBe(false)
      const q = createPublicClient({ chain: { ...chain, rpcUrls: { default: { http: [second.url] } } }, transport: http(second.url) })
      expect(await q.getBalance({ address: account.address })).toBe(balance)
      expect(await q.readContract({ address: deployed.contractAddress!, abi: probe.abi, functionName: 'stored' })).toBe(5n)
      expect(await q.getTransactionCount({ address: account.address })).toBe(2)
      expect((await q.getTransactionReceipt({ hash: stored })).blockNumber).toBe(3n)
      const events = await q.getContractEvents({ address: deployed.contractAddress!, abi: probe.abi, eventName: 'Stored', fromBlock: 0n })
      expect(events.map((e) => (e.args as { epoch: bigint }).epoch)).toEqual([3n])
      await second.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('creates a contract at a fixed address in its pre-history, its constructor run there, and replays it after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'simfoc-place-'))
    const placed = compileProbe('Placed')
    const at = '0xcA11bde05977b3631167028862bE2a173976CA11'
    const options = { genesisTimestamp: Date.now() / 1000, stateFile: join(dir, 'chain.sqlite') }
    const read = async (url: string, functionName: string) =>
      createPublicClient({ transport: http(url) }).readContract({ address: at, abi: placed.abi, functionName })
    try {
      const first = await startEvmNode(options)
      await first.placeContract(at, account.address, encodeDeployData({ abi: placed.abi, bytecode: placed.bytecode, args: [42n] }))
      expect(await read(first.url, 'deployer')).toBe(account.address)
      expect(await read(first.url, 'seeded')).toBe(42n)
      // An address that holds code already is refused, and keeps what it had.
      await expect(
        first.placeContract(at, account.address, encodeDeployData({ abi: placed.abi, bytecode: placed.bytecode, args: [7n] })),
      ).rejects.toThrow(/already holds a contract/)
      await first.close()

      const second = await startEvmNode(options)
      expect(await read(second.url, 'seeded')).toBe(42n)
      expect(await read(second.url, 'deployer')).toBe(account.address)
      await second.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('answers bad requests in the JSON-RPC envelope', async () => {
    const post = (body: string) =>
      fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => ({
        status: r.status,
        body: await r.json(),
      }))
    expect((await post('{')).body.error.code).toBe(-32700)
    expect((await post('{"jsonrpc":"2.0","id":1,"method":"eth_nope","params":[]}')).body.error.code).toBe(-32601)
    expect((await post('{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x12"]}')).body.error.code).toBe(-32602)
    expect((await post('{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0xffffff",false]}')).body.error.message).toMatch(
      /future/,
    )
    expect((await post('[]')).body.error.code).toBe(-32600)
    const batch = await post('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"}]')
    expect(batch.body.map((r: { id: number }) => r.id)).toEqual([1, 2])
    expect((await post('x'.repeat(9 * 1024 * 1024))).status).toBe(413)
    expect((await fetch(node.url)).status).toBe(405)
  })
})

import { createBlock, type Block } from '@ethereumjs/block'
import { createCustomCommon, Hardfork, Mainnet, type Common } from '@ethereumjs/common'
import { createEVM, EVMError, type ExecResult, type PrecompileInput } from '@ethereumjs/evm'
import { MerkleStateManager } from '@ethereumjs/statemanager'
import { createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx'
import {
  Account,
  bigIntToBytes,
  createZeroAddress,
  bytesToHex,
  createAddressFromString,
  hexToBytes,
  setLengthLeft,
  type PrefixedHexString,
} from '@ethereumjs/util'
import { createVM, runTx, type RunTxResult, type VM } from '@ethereumjs/vm'
import { sha256 } from '@noble/hashes/sha2.js'

/**
 * The EVM under the simulated chain: ethereumjs with Cancun's rules and
 * FEVM's base fee, block gas limit and beacon randomness precompile. It runs
 * a transaction or a call in the block of the epoch it is given and holds
 * the state; which epoch that is, and what is kept of a run, the chain
 * decides (evm-chain.ts).
 */

type Hex = PrefixedHexString

/**
 * The base fee of every simulated block: FEVM's floor, 100 attoFIL per gas
 * (lotus chain/types/basefee: MinimumBaseFee), which it rarely leaves.
 */
export const BASE_FEE = 100n
/** A Filecoin block's gas limit (lotus build/buildconstants: BlockGasLimit = 10 000 000 000). */
export const BLOCK_GAS_LIMIT = 10_000_000_000n
/** FEVM's precompile for drand beacon randomness at an epoch (filecoin-project/fvm-solidity FVMRandom.sol). */
export const BEACON_RANDOMNESS_PRECOMPILE = '0xfe00000000000000000000000000000000000006'

/** A call that does not change state (eth_call, eth_estimateGas). */
export interface CallRequest {
  from?: Hex
  to?: Hex | null
  data?: Hex
  value?: bigint
  gas?: bigint
}

/** A transaction or call that the EVM reverted: its revert data, for the JSON-RPC error's `data`. */
export class ExecutionReverted extends Error {
  constructor(
    readonly data: Hex,
    reason: string,
  ) {
    super(reason ? `execution reverted: ${reason}` : 'execution reverted')
  }
}

/** A transaction the chain refuses before executing it (bad nonce, no funds, wrong chain). */
export class TransactionRejected extends Error {}

export interface ChainVmOptions {
  chainId: number
  /** Unix seconds of an epoch's block, as FEVM's block.timestamp. */
  epochTimestamp: (epoch: number) => number
  /** Seeds the beacon randomness, so a simulation replays the same challenges. */
  seed: string
}

export interface ChainVm {
  /** A signed transaction from its RLP bytes; TransactionRejected when it is not one. */
  decode(raw: Hex): TypedTransaction
  /** Runs a transaction in the block of `epoch`, keeping what it changed; TransactionRejected when the chain refuses it. */
  run(tx: TypedTransaction, epoch: number): Promise<RunTxResult>
  /** Runs a call in the block of `epoch` and undoes it; ExecutionReverted when the EVM reverts it. */
  simulate(request: CallRequest, epoch: number): Promise<{ returnValue: Hex; gasUsed: bigint }>
  balance(address: Hex): Promise<bigint>
  nonce(address: Hex): Promise<number>
  code(address: Hex): Promise<Hex>
  storageAt(address: Hex, slot: Hex): Promise<Hex>
  setBalance(address: Hex, wei: bigint): Promise<void>
  /**
   * Creates a contract at a given address, in the block of `epoch`: runs its creation code
   * (`initcode`, constructor arguments appended) as if `from` had deployed it there, keeping
   * the storage its constructor wrote and the code it returned. No transaction does that; the
   * chain uses it for its pre-history only (evm-chain.ts placeContract).
   */
  place(address: Hex, from: Hex, initcode: Hex, epoch: number): Promise<void>
}

/** The revert reason of `Error(string)` data, else ''. */
function revertReason(data: Uint8Array): string {
  if (data.length < 68 || bytesToHex(data.subarray(0, 4)) !== '0x08c379a0') return ''
  const length = Number(BigInt(bytesToHex(data.subarray(36, 68))))
  return new TextDecoder().decode(data.subarray(68, 68 + length))
}

/** Intrinsic gas of a transaction (EIP-2028 calldata prices, EIP-3860 initcode words), which runCall leaves out. */
export function intrinsicGas(request: CallRequest): bigint {
  const data = request.data ? hexToBytes(request.data) : new Uint8Array()
  let gas = 21_000n
  for (const byte of data) gas += byte === 0 ? 4n : 16n
  if (!request.to) gas += 32_000n + 2n * BigInt(Math.ceil(data.length / 32))
  return gas
}

/** fvm-solidity FVMRandom.getBeaconRandomness: 32 bytes for an epoch not after the current one. */
function beaconRandomness(seed: string, executingEpoch: () => number) {
  return (input: PrecompileInput): ExecResult => {
    const epoch = BigInt(bytesToHex(setLengthLeft(input.data.subarray(0, 32), 32)))
    if (input.data.length !== 32 || epoch > BigInt(executingEpoch())) {
      return { returnValue: new Uint8Array(), executionGasUsed: input.gasLimit, exceptionError: new EVMError({ code: 'revert' } as never) }
    }
    const word = setLengthLeft(bigIntToBytes(epoch), 32)
    return {
      returnValue: sha256(new Uint8Array([...new TextEncoder().encode(`simulated drand ${seed}`), ...word])),
      executionGasUsed: 2_000n,
    }
  }
}

/** The block an epoch's transactions and calls run in: its number and time, FEVM's base fee and gas limit. */
function ethBlock(common: Common, number: number, timestamp: number): Block {
  return createBlock(
    {
      header: {
        number: BigInt(number),
        timestamp: BigInt(timestamp),
        gasLimit: BLOCK_GAS_LIMIT,
        baseFeePerGas: BASE_FEE,
        coinbase: createZeroAddress(),
      },
    },
    { common, skipConsensusFormatValidation: true },
  )
}

export async function createChainVm(options: ChainVmOptions): Promise<ChainVm> {
  const common = createCustomCommon({ chainId: options.chainId, name: 'simulated-foc' }, Mainnet, { hardfork: Hardfork.Cancun })
  const stateManager = new MerkleStateManager()
  let executingEpoch = 0
  const evm = await createEVM({
    common,
    stateManager,
    customPrecompiles: [
      { address: createAddressFromString(BEACON_RANDOMNESS_PRECOMPILE), function: beaconRandomness(options.seed, () => executingEpoch) },
    ],
  })
  const vm: VM = await createVM({ common, stateManager, evm })
  const blockOf = (epoch: number) => ethBlock(common, epoch, options.epochTimestamp(epoch))
  const account = (address: Hex) => stateManager.getAccount(createAddressFromString(address))

  /**
   * Forgets what the last call warmed (EIP-2929 access lists) and the storage
   * values it started from (EIP-2200), as runTx does around a transaction;
   * runCall leaves both, and a call measured on warm storage under-estimates gas.
   */
  const freshAccess = () => {
    vm.evm.journal.cleanJournal()
    stateManager.originalStorageCache.clear()
  }

  return {
    decode(raw) {
      let tx: TypedTransaction
      try {
        tx = createTxFromRLP(hexToBytes(raw), { common })
      } catch (error) {
        throw new TransactionRejected(`invalid transaction: ${(error as Error).message.replace(/ -> .*$/s, '')}`)
      }
      if (!tx.isSigned() || !tx.verifySignature()) throw new TransactionRejected('invalid transaction: bad signature')
      return tx
    },
    async run(tx, epoch) {
      const sender = (await stateManager.getAccount(tx.getSenderAddress())) ?? new Account()
      if (tx.nonce < sender.nonce) throw new TransactionRejected(`nonce too low: next nonce ${sender.nonce}, tx nonce ${tx.nonce}`)
      if (tx.nonce > sender.nonce) throw new TransactionRejected(`nonce too high: next nonce ${sender.nonce}, tx nonce ${tx.nonce}`)
      executingEpoch = epoch
      try {
        return await runTx(vm, { tx, block: blockOf(epoch), skipHardForkValidation: true })
      } catch (error) {
        throw new TransactionRejected((error as Error).message.replace(/ -> .*$/s, ''))
      }
    },
    async simulate(request, epoch) {
      executingEpoch = epoch
      freshAccess()
      await stateManager.checkpoint()
      try {
        const caller = createAddressFromString(request.from ?? '0x0000000000000000000000000000000000000000')
        const result = await vm.evm.runCall({
          caller,
          origin: caller,
          to: request.to ? createAddressFromString(request.to) : undefined,
          data: request.data ? hexToBytes(request.data) : new Uint8Array(),
          value: request.value ?? 0n,
          gasLimit: request.gas ?? BLOCK_GAS_LIMIT,
          block: blockOf(epoch),
          skipBalance: true,
        })
        const { exceptionError, returnValue, executionGasUsed } = result.execResult
        if (exceptionError)
          throw new ExecutionReverted(
            bytesToHex(returnValue),
            revertReason(returnValue) || (exceptionError.error === 'revert' ? '' : exceptionError.error),
          )
        return { returnValue: bytesToHex(returnValue), gasUsed: executionGasUsed }
      } finally {
        await stateManager.revert()
        freshAccess()
      }
    },
    balance: async (address) => (await account(address))?.balance ?? 0n,
    nonce: async (address) => Number((await account(address))?.nonce ?? 0n),
    code: async (address) => bytesToHex(await stateManager.getCode(createAddressFromString(address))),
    storageAt: async (address, slot) =>
      bytesToHex(setLengthLeft(await stateManager.getStorage(createAddressFromString(address), setLengthLeft(hexToBytes(slot), 32)), 32)),
    async setBalance(address, wei) {
      const at = createAddressFromString(address)
      const funded = (await stateManager.getAccount(at)) ?? new Account()
      funded.balance = wei
      await stateManager.putAccount(at, funded)
    },
    async place(address, from, initcode, epoch) {
      const at = createAddressFromString(address)
      const there = await stateManager.getAccount(at)
      if ((there?.nonce ?? 0n) > 0n || (await stateManager.getCode(at)).length > 0) {
        throw new TransactionRejected(`${address} already holds a contract`)
      }
      executingEpoch = epoch
      freshAccess()
      await stateManager.checkpoint()
      try {
        // A new contract's account starts at nonce 1 (EIP-161), keeping any FIL already sent to the address.
        await stateManager.putAccount(at, new Account(1n, there?.balance ?? 0n))
        const result = await vm.evm.runCode({
          code: hexToBytes(initcode),
          data: new Uint8Array(),
          to: at,
          caller: createAddressFromString(from),
          origin: createAddressFromString(from),
          gasLimit: BLOCK_GAS_LIMIT,
          block: blockOf(epoch),
        })
        if (result.exceptionError) {
          throw new TransactionRejected(
            `creating the contract at ${address} failed: ${revertReason(result.returnValue) || result.exceptionError.error}`,
          )
        }
        await stateManager.putCode(at, result.returnValue)
        await stateManager.commit()
      } catch (error) {
        await stateManager.revert()
        throw error
      } finally {
        freshAccess()
      }
    },
  }
}

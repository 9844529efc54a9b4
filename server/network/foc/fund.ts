import * as Erc20 from '@filoz/synapse-core/erc20'
import * as Pay from '@filoz/synapse-core/pay'
import { formatUnits, maxUint256, type Hash } from 'viem'
import { writeContract } from 'viem/actions'
import { EPOCHS_PER_DAY } from '../../shared/epochs.ts'
import { NetworkError } from '../errors.ts'
import { filecoinPayAbi } from './abi.ts'
import type { FocContext } from './context.ts'
import { FocFundsError } from './errors.ts'

/** The longest lockup the service may hold: GA's 30 days (PriceListUSDFC.sol DEFAULT_LOCKUP_PERIOD), what the SDK approves too. */
const MAX_LOCKUP_PERIOD = BigInt(30 * EPOCHS_PER_DAY)

/**
 * Deposits `amount` USDFC into Filecoin Pay, approving the warm storage service as the payer's
 * operator first when it is not yet (with the allowances the SDK gives it: any rate and lockup, 30
 * days); resolves with the deposit's transaction once it succeeded on chain.
 *
 * DEPARTURE from SDK 0.41: its deposits sign an ERC-2612 permit for the chain it looks up by id
 * (synapse-core 0.5.2 pay/deposit-with-permit.ts getChain(client.chain.id)), so on a devnet it signs
 * for, and calls, the built-in devnet's addresses. Here the approval, an ERC-20 allowance and a plain
 * deposit (Filecoin Pay 1.0.0 setOperatorApproval, deposit) go to the chain's own contracts on every network.
 */
export async function fund(c: Pick<FocContext, 'synapse' | 'client' | 'chain' | 'payer'>, amount: bigint): Promise<Hash> {
  const held = await c.synapse.payments.walletBalance({ token: 'USDFC' })
  if (held < amount)
    throw new FocFundsError(
      `the wallet ${c.payer} holds ${formatUnits(held, 18)} USDFC; ${formatUnits(amount, 18)} USDFC is to be deposited`,
    )
  const { filecoinPay, usdfc, fwss } = c.chain.contracts
  const confirmed = async (hash: Hash) => {
    const receipt = await c.client.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new NetworkError('REJECTED_BY_CHAIN', `transaction ${hash} failed on chain`)
    return hash
  }
  if (!(await Pay.isFwssMaxApproved(c.client, { clientAddress: c.payer }))) {
    await confirmed(
      await writeContract(c.client, {
        address: filecoinPay.address,
        abi: filecoinPayAbi,
        functionName: 'setOperatorApproval',
        args: [usdfc.address, fwss.address, true, maxUint256, maxUint256, MAX_LOCKUP_PERIOD],
      }),
    )
  }
  await confirmed(await Erc20.approve(c.client, { amount, spender: filecoinPay.address }))
  return confirmed(
    await writeContract(c.client, {
      address: filecoinPay.address,
      abi: filecoinPayAbi,
      functionName: 'deposit',
      args: [usdfc.address, c.payer, amount],
    }),
  )
}

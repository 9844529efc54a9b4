import * as Erc20 from '@filoz/synapse-core/erc20'
import * as Pay from '@filoz/synapse-core/pay'
import { formatUnits, type Hash } from 'viem'
import { NetworkError } from '../errors.ts'
import type { FocContext } from './context.ts'
import { FocFundsError } from './errors.ts'

/**
 * Deposits `amount` USDFC into Filecoin Pay, approving the warm storage
 * service in the same transaction (synapse-core pay/fund.ts) when it is not
 * yet; resolves with the deposit's transaction once it succeeded on chain.
 */
export async function fund(c: Pick<FocContext, 'synapse' | 'client' | 'chain' | 'payer'>, amount: bigint): Promise<Hash> {
  const held = await c.synapse.payments.walletBalance({ token: 'USDFC' })
  if (held < amount)
    throw new FocFundsError(
      `the wallet ${c.payer} holds ${formatUnits(held, 18)} USDFC; ${formatUnits(amount, 18)} USDFC is to be deposited`,
    )
  const confirmed = async (hash: Hash) => {
    const receipt = await c.client.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new NetworkError('REJECTED_BY_CHAIN', `transaction ${hash} failed on chain`)
    return hash
  }
  if (!(await Pay.isFwssMaxApproved(c.client, { clientAddress: c.payer }))) {
    return confirmed(await Pay.fund(c.client, { amount, needsFwssMaxApproval: true }))
  }
  // Approved already: the SDK would deposit with a permit, which looks its chain up by id
  // (synapse-core 0.5.2 pay/deposit-with-permit.ts) and so signs for address zero on a devnet.
  // An allowance and a plain deposit work the same on every chain.
  await confirmed(await Erc20.approve(c.client, { amount, spender: c.chain.contracts.filecoinPay.address }))
  return confirmed(await Pay.deposit(c.client, { amount }))
}

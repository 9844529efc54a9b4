import * as Pay from '@filoz/synapse-core/pay'
import type { FocContext } from './context.ts'
import type { FocAccount } from './types.ts'

/** The payer's wallet balances and its standing in Filecoin Pay (synapse-core pay/get-account-summary.ts). */
export async function account({ synapse, client, payer }: Pick<FocContext, 'synapse' | 'client' | 'payer'>): Promise<FocAccount> {
  const [summary, walletUsdfc, walletFil] = await Promise.all([
    Pay.getAccountSummary(client, { address: payer }),
    synapse.payments.walletBalance({ token: 'USDFC' }),
    synapse.payments.walletBalance({ token: 'FIL' }),
  ])
  return {
    walletUsdfc,
    walletFil,
    funds: summary.funds,
    availableFunds: summary.availableFunds,
    lockupRatePerEpoch: summary.lockupRatePerEpoch,
    runwayEpochs: summary.runwayInEpochs,
    epoch: summary.epoch,
  }
}

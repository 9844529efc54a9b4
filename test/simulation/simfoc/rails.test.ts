/**
 * Filecoin Pay's lockup and settlement arithmetic on our stand-in, against
 * numbers worked out by hand from FilOzone/filecoin-pay src/FilecoinPayV1.sol:
 *
 * - a payer's lockup grows by lockupRate each epoch, as far as its funds cover
 *   whole epochs (settleAccountLockup);
 * - a rail locks lockupFixed + rate × lockupPeriod, and pays rate × epochs,
 *   no further than the payer's lockup is settled (a live rail) or its end
 *   (a terminated one), each epoch at the rate it had;
 * - 1/200 of every payment (rounded up) is the network fee, then the
 *   operator's commission (bps, rounded down) out of the rest;
 * - termination ends the rail one lockup period after the payer's settled epoch.
 *
 * An operator account stands in for FilecoinWarmStorageService (rails with no
 * validator), and a small test validator for the validated case. The SDK
 * reads what the user sees: accounts, getAccountSummary, rails.
 */
import * as Abis from '@filoz/synapse-core/abis'
import * as Pay from '@filoz/synapse-core/pay'
import { maxUint256, parseEventLogs, type Abi, type Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileSources } from '../../../server/simulation/simfoc/contracts/compile.ts'
import { startPayChain, type PayChain, type SdkClient } from './pay-fixture.ts'

const payAbi = Abis.filecoinPay as Abi

describe('Filecoin Pay rails: lockup, settlement, fees, termination', () => {
  let fx: PayChain
  let operator: SdkClient

  beforeAll(async () => {
    fx = await startPayChain()
    operator = await fx.wallet('operator')
  })
  afterAll(async () => {
    await fx?.close()
  })

  const pay = (from: SdkClient, functionName: string, args: unknown[]) =>
    fx.send(from, fx.addresses.filecoinPay, payAbi, functionName, args)

  /** A client with `funds` deposited and `operator` approved. */
  async function fundedClient(name: string, funds: bigint, approval = { rate: 1000n, lockup: 500_000n, period: 100n }) {
    const client = await fx.wallet(name)
    await fx.mint(client.account.address, funds)
    await Pay.depositWithPermitSync(client, { amount: funds })
    await Pay.setOperatorApprovalSync(client, {
      operator: operator.account.address,
      approve: true,
      rateAllowance: approval.rate,
      lockupAllowance: approval.lockup,
      maxLockupPeriod: approval.period,
    })
    return client
  }

  async function createRail(
    client: SdkClient,
    payee: Address,
    commissionBps = 0n,
    validator: Address = '0x0000000000000000000000000000000000000000',
  ) {
    const hash = await pay(operator, 'createRail', [
      fx.addresses.usdfc,
      client.account.address,
      payee,
      validator,
      commissionBps,
      operator.account.address,
    ])
    const receipt = await fx.publicClient.getTransactionReceipt({ hash })
    const [created] = parseEventLogs({ abi: Abis.filecoinPay, logs: receipt.logs, eventName: 'RailCreated' })
    return created.args.railId
  }

  const account = async (who: Address) => {
    const [funds, lockupCurrent, lockupRate, lockupLastSettledAt] = await fx.publicClient.readContract({
      address: fx.addresses.filecoinPay,
      abi: Abis.filecoinPay,
      functionName: 'accounts',
      args: [fx.addresses.usdfc, who],
    })
    return { funds, lockupCurrent, lockupRate, lockupLastSettledAt }
  }
  const accountInfoIfSettled = (who: Address) =>
    fx.publicClient.readContract({
      address: fx.addresses.filecoinPay,
      abi: Abis.filecoinPay,
      functionName: 'getAccountInfoIfSettled',
      args: [fx.addresses.usdfc, who],
    })

  it('streams a healthy rail: lockup, funded-until, settlement with fees and commission, a rate change, a one-time payment, termination', async () => {
    fx.setEpoch(100)
    const client = await fundedClient('client-a', 1_000_000n)
    const payee = (await fx.wallet('provider-a')).account.address
    const railId = await createRail(client, payee, 1000n) // 10 % commission to the operator

    await pay(operator, 'modifyRailLockup', [railId, 50n, 20_000n])
    await pay(operator, 'modifyRailPayment', [railId, 100n, 0n])
    // 20 000 fixed + 100 × 50 epochs
    expect(await account(client.account.address)).toEqual({
      funds: 1_000_000n,
      lockupCurrent: 25_000n,
      lockupRate: 100n,
      lockupLastSettledAt: 100n,
    })
    expect(await Pay.operatorApprovals(client, { address: client.account.address, operator: operator.account.address })).toMatchObject({
      rateUsage: 100n,
      lockupUsage: 25_000n,
    })
    // funded until 100 + (1 000 000 − 25 000) / 100
    expect(await accountInfoIfSettled(client.account.address)).toEqual([9850n, 1_000_000n, 975_000n, 100n])

    fx.setEpoch(160)
    // nothing sent for 60 epochs: the chain still says 100, readers project
    expect((await account(client.account.address)).lockupLastSettledAt).toBe(100n)
    expect(await accountInfoIfSettled(client.account.address)).toEqual([9850n, 1_000_000n, 969_000n, 100n])
    const summary = await Pay.getAccountSummary(client, { address: client.account.address })
    expect(summary).toMatchObject({
      funds: 1_000_000n,
      availableFunds: 969_000n,
      debt: 0n,
      lockupRatePerEpoch: 100n,
      totalLockup: 31_000n,
      totalFixedLockup: 20_000n,
      totalRateBasedLockup: 11_000n,
      runwayInEpochs: 9850n - 160n,
      grossCoverageInEpochs: 10_000n,
      epoch: 160n,
    })

    const payeeAccount = await fx.wallet('provider-a')
    const first = await Pay.settleRailSync(payeeAccount, { railId })
    // 60 epochs × 100 = 6 000; fee ⌈6 000/200⌉ = 30; commission 10 % of 5 970 = 597; payee 5 373
    expect(first.event.args).toMatchObject({
      totalSettledAmount: 6000n,
      networkFee: 30n,
      operatorCommission: 597n,
      totalNetPayeeAmount: 5373n,
      settledUpTo: 160n,
    })
    expect(await account(client.account.address)).toEqual({
      funds: 994_000n,
      lockupCurrent: 25_000n,
      lockupRate: 100n,
      lockupLastSettledAt: 160n,
    })
    expect((await account(payee)).funds).toBe(5373n)
    expect((await account(operator.account.address)).funds).toBe(597n)
    expect((await account(fx.addresses.filecoinPay)).funds).toBe(30n)
    expect(
      (
        await fx.publicClient.readContract({
          address: fx.addresses.filecoinPay,
          abi: Abis.filecoinPay,
          functionName: 'auctionInfo',
          args: [fx.addresses.usdfc],
        })
      )[0],
    ).toBeGreaterThan(0n)

    // at 200 the rate goes to 300; 100 still applies up to and including epoch 200
    fx.setEpoch(200)
    await pay(operator, 'modifyRailPayment', [railId, 300n, 0n])
    // settled to 200: 25 000 + 40 × 100 = 29 000; then − 100 × 50 + 300 × 50
    expect(await account(client.account.address)).toEqual({
      funds: 994_000n,
      lockupCurrent: 39_000n,
      lockupRate: 300n,
      lockupLastSettledAt: 200n,
    })
    expect(
      await fx.publicClient.readContract({
        address: fx.addresses.filecoinPay,
        abi: Abis.filecoinPay,
        functionName: 'getRateChangeQueueSize',
        args: [railId],
      }),
    ).toBe(1n)

    fx.setEpoch(250)
    const second = await Pay.settleRailSync(payeeAccount, { railId, untilEpoch: 250n })
    // 40 × 100 + 50 × 300 = 19 000; fee 95; commission 1 890 (of 18 905); payee 17 015
    expect(second.event.args).toMatchObject({
      totalSettledAmount: 19_000n,
      networkFee: 95n,
      operatorCommission: 1890n,
      totalNetPayeeAmount: 17_015n,
      settledUpTo: 250n,
    })
    // what is left locked is the rail's own lockup: 20 000 + 300 × 50
    expect(await account(client.account.address)).toEqual({
      funds: 975_000n,
      lockupCurrent: 35_000n,
      lockupRate: 300n,
      lockupLastSettledAt: 250n,
    })
    expect(
      await fx.publicClient.readContract({
        address: fx.addresses.filecoinPay,
        abi: Abis.filecoinPay,
        functionName: 'getRateChangeQueueSize',
        args: [railId],
      }),
    ).toBe(0n)

    // a one-time payment of 5 000 out of the fixed lockup: fee 25, commission 497, payee 4 478
    await pay(operator, 'modifyRailPayment', [railId, 300n, 5000n])
    expect(await account(client.account.address)).toEqual({
      funds: 970_000n,
      lockupCurrent: 30_000n,
      lockupRate: 300n,
      lockupLastSettledAt: 250n,
    })
    expect((await Pay.getRail(client, { railId })).lockupFixed).toBe(15_000n)
    expect(await Pay.operatorApprovals(client, { address: client.account.address, operator: operator.account.address })).toMatchObject({
      rateUsage: 300n,
      lockupUsage: 30_000n,
      lockupAllowance: 495_000n,
    })

    // the operator terminates at 300: the end is the settled epoch plus the lockup period
    fx.setEpoch(300)
    await pay(operator, 'terminateRail', [railId])
    expect(await Pay.getRail(client, { railId })).toMatchObject({ endEpoch: 350n, paymentRate: 300n })
    expect(await account(client.account.address)).toEqual({
      funds: 970_000n,
      lockupCurrent: 45_000n,
      lockupRate: 0n,
      lockupLastSettledAt: 300n,
    })
    expect(await Pay.getRailsForPayerAndToken(client, { payer: client.account.address })).toEqual({
      results: [{ railId, isTerminated: true, endEpoch: 350n }],
      nextOffset: 1n,
      total: 1n,
    })

    // settling past the end pays 250..350 at 300 = 30 000 and finalizes the rail, releasing the fixed lockup
    fx.setEpoch(400)
    const last = await Pay.settleRailSync(payeeAccount, { railId })
    expect(last.event.args).toMatchObject({
      totalSettledAmount: 30_000n,
      networkFee: 150n,
      operatorCommission: 2985n,
      totalNetPayeeAmount: 26_865n,
      settledUpTo: 350n,
    })
    expect(await account(client.account.address)).toEqual({ funds: 940_000n, lockupCurrent: 0n, lockupRate: 0n, lockupLastSettledAt: 400n })
    await expect(Pay.getRail(client, { railId })).rejects.toThrow(/RailInactiveOrSettled/)
    expect(await Pay.getRailsForPayeeAndToken(client, { payee })).toEqual({ results: [], nextOffset: 1n, total: 1n })
    expect(await Pay.operatorApprovals(client, { address: client.account.address, operator: operator.account.address })).toMatchObject({
      rateUsage: 0n,
      lockupUsage: 0n,
    })

    // everything paid adds up: 60 000 out of the client, to payee, operator and fees
    expect((await account(payee)).funds).toBe(5373n + 17_015n + 4478n + 26_865n)
    expect((await account(operator.account.address)).funds).toBe(597n + 1890n + 497n + 2985n)
    expect((await account(fx.addresses.filecoinPay)).funds).toBe(30n + 95n + 25n + 150n)
    await Pay.withdrawSync(client, { amount: 940_000n })
    expect((await account(client.account.address)).funds).toBe(0n)
  })

  it('an underfunded payer: lockup stops at the last whole funded epoch, settlement stops there, only the operator may terminate, the reserve pays the end', async () => {
    fx.setEpoch(1000)
    const client = await fundedClient('client-b', 10_000n)
    const payee = await fx.wallet('provider-b')
    const railId = await createRail(client, payee.account.address)
    await pay(operator, 'modifyRailLockup', [railId, 100n, 0n])
    await pay(operator, 'modifyRailPayment', [railId, 10n, 0n])
    expect(await account(client.account.address)).toEqual({
      funds: 10_000n,
      lockupCurrent: 1000n,
      lockupRate: 10n,
      lockupLastSettledAt: 1000n,
    })
    // funded until 1000 + (10 000 − 1 000) / 10 = 1900
    expect((await accountInfoIfSettled(client.account.address))[0]).toBe(1900n)
    expect((await Pay.getAccountSummary(client, { address: client.account.address })).runwayInEpochs).toBe(900n)

    fx.setEpoch(2000)
    const summary = await Pay.getAccountSummary(client, { address: client.account.address })
    expect(summary).toMatchObject({ runwayInEpochs: 0n, availableFunds: 0n, debt: 1000n + 10n * 1000n - 10_000n })

    const settled = await Pay.settleRailSync(payee, { railId })
    // the lockup reached only epoch 1900 (9 000 more locked), so 900 epochs × 10 are paid
    expect(settled.event.args).toMatchObject({ totalSettledAmount: 9000n, networkFee: 45n, totalNetPayeeAmount: 8955n, settledUpTo: 1900n })
    expect(await account(client.account.address)).toEqual({
      funds: 1000n,
      lockupCurrent: 1000n,
      lockupRate: 10n,
      lockupLastSettledAt: 1900n,
    })
    expect(await Pay.accounts(client, { address: client.account.address })).toMatchObject({ availableFunds: 0n })

    // behind on lockup: no rate change, no withdrawal, no termination by the client
    await expect(pay(operator, 'modifyRailPayment', [railId, 20n, 0n])).rejects.toThrow(/LockupNotSettledRateChangeNotAllowed/)
    await expect(pay(operator, 'modifyRailLockup', [railId, 50n, 0n])).rejects.toThrow(/LockupPeriodChangeNotAllowedDueToInsufficientFunds/)
    await expect(pay(client, 'withdraw', [fx.addresses.usdfc, 1n])).rejects.toThrow(/lockup not settled/)
    await expect(pay(client, 'terminateRail', [railId])).rejects.toThrow(/NotAuthorizedToTerminateRail/)

    await pay(operator, 'terminateRail', [railId])
    expect((await Pay.getRail(client, { railId })).endEpoch).toBe(2000n)
    const final = await Pay.settleRailSync(payee, { railId })
    // the 100-epoch reserve (1 000) pays 1900..2000, then the rail is finalized
    expect(final.event.args).toMatchObject({ totalSettledAmount: 1000n, networkFee: 5n, totalNetPayeeAmount: 995n, settledUpTo: 2000n })
    expect(await account(client.account.address)).toEqual({ funds: 0n, lockupCurrent: 0n, lockupRate: 0n, lockupLastSettledAt: 2000n })
    expect((await account(payee.account.address)).funds).toBe(8955n + 995n)
  })

  it("holds the operator to the client's approval", async () => {
    fx.setEpoch(2500)
    const client = await fundedClient('client-c', 100_000n, { rate: 50n, lockup: 10_000n, period: 20n })
    const stranger = await fx.wallet('stranger')
    const payee = (await fx.wallet('provider-c')).account.address
    await expect(
      fx.send(stranger, fx.addresses.filecoinPay, payAbi, 'createRail', [
        fx.addresses.usdfc,
        client.account.address,
        payee,
        '0x0000000000000000000000000000000000000000',
        0n,
        stranger.account.address,
      ]),
    ).rejects.toThrow(/OperatorNotApproved/)
    await expect(createRail(client, payee, 10_001n)).rejects.toThrow(/CommissionRateTooHigh/)
    const railId = await createRail(client, payee)
    await expect(pay(operator, 'modifyRailLockup', [railId, 21n, 0n])).rejects.toThrow(/LockupPeriodExceedsOperatorMaximum/)
    await expect(pay(operator, 'modifyRailLockup', [railId, 20n, 10_001n])).rejects.toThrow(/OperatorLockupAllowanceExceeded/)
    await expect(pay(operator, 'modifyRailPayment', [railId, 51n, 0n])).rejects.toThrow(/OperatorRateAllowanceExceeded/)
    await expect(fx.send(stranger, fx.addresses.filecoinPay, payAbi, 'modifyRailPayment', [railId, 1n, 0n])).rejects.toThrow(
      /OnlyRailOperatorAllowed/,
    )
    await expect(pay(operator, 'modifyRailPayment', [railId, 0n, 1n])).rejects.toThrow(/OneTimePaymentExceedsLockup/)
    await expect(Pay.settleRail(client, { railId, untilEpoch: 2501n })).rejects.toThrow(/CannotSettleFutureEpochs/)
  })

  it('a lockup the funds cannot cover is refused', async () => {
    fx.setEpoch(2600)
    const client = await fundedClient('client-d', 1000n, { rate: maxUint256, lockup: maxUint256, period: 1000n })
    const railId = await createRail(client, (await fx.wallet('provider-d')).account.address)
    await expect(pay(operator, 'modifyRailLockup', [railId, 10n, 1001n])).rejects.toThrow(/LockupExceedsFundsInvariant/)
    await pay(operator, 'modifyRailLockup', [railId, 10n, 1000n])
    await expect(pay(operator, 'modifyRailPayment', [railId, 1n, 0n])).rejects.toThrow(/LockupExceedsFundsInvariant/)
  })

  it('asks the validator what to pay and tells it of termination; the payer may settle a terminated rail without it after the end', async () => {
    const validatorArtifact = compileSources({ 'HalfValidator.sol': HALF_VALIDATOR }).HalfValidator
    const hash = await operator.deployContract({ abi: validatorArtifact.abi, bytecode: validatorArtifact.bytecode })
    const validator = (await fx.publicClient.waitForTransactionReceipt({ hash })).contractAddress!

    fx.setEpoch(3000)
    const client = await fundedClient('client-e', 100_000n)
    const payee = await fx.wallet('provider-e')
    const railId = await createRail(client, payee.account.address, 0n, validator)
    await pay(operator, 'modifyRailLockup', [railId, 10n, 0n])
    await pay(operator, 'modifyRailPayment', [railId, 100n, 0n])

    fx.setEpoch(3020)
    const first = await Pay.settleRailSync(payee, { railId })
    // proposed 20 × 100 = 2 000, the validator grants half; the lockup still drops by the full 2 000
    expect(first.event.args).toMatchObject({ totalSettledAmount: 1000n, networkFee: 5n, totalNetPayeeAmount: 995n, settledUpTo: 3020n })
    expect(await account(client.account.address)).toEqual({
      funds: 99_000n,
      lockupCurrent: 1000n,
      lockupRate: 100n,
      lockupLastSettledAt: 3020n,
    })

    // the validator confirms only up to 3030 of 3020..3040
    await fx.send(operator, validator, validatorArtifact.abi, 'setCap', [3030n])
    fx.setEpoch(3040)
    const [, , , , finalSettledEpoch, note] = (
      await fx.publicClient.simulateContract({
        account: payee.account,
        address: fx.addresses.filecoinPay,
        abi: Abis.filecoinPay,
        functionName: 'settleRail',
        args: [railId, 3040n],
      })
    ).result
    expect([finalSettledEpoch, note]).toEqual([3030n, 'half'])
    const second = await Pay.settleRailSync(payee, { railId, untilEpoch: 3040n })
    expect(second.event.args).toMatchObject({ totalSettledAmount: 500n, networkFee: 3n, totalNetPayeeAmount: 497n, settledUpTo: 3030n })
    expect(await account(client.account.address)).toEqual({
      funds: 98_500n,
      lockupCurrent: 2000n,
      lockupRate: 100n,
      lockupLastSettledAt: 3040n,
    })

    // the client, fully funded, terminates: the validator hears of it
    await pay(client, 'terminateRail', [railId])
    const heard = await fx.publicClient.readContract({ address: validator, abi: validatorArtifact.abi, functionName: 'heard', args: [] })
    expect(heard).toEqual([railId, client.account.address, 3050n])

    await expect(Pay.settleTerminatedRailWithoutValidation(client, { railId })).rejects.toThrow(/CannotSettleTerminatedRailBeforeMaxEpoch/)
    fx.setEpoch(3051)
    await expect(fx.send(payee, fx.addresses.filecoinPay, payAbi, 'settleTerminatedRailWithoutValidation', [railId])).rejects.toThrow(
      /OnlyRailClientAllowed/,
    )
    const escape = await Pay.settleTerminatedRailWithoutValidationSync(client, { railId })
    // 3030..3050 in full: 2 000, fee 10
    expect(escape.event.args).toMatchObject({ totalSettledAmount: 2000n, networkFee: 10n, totalNetPayeeAmount: 1990n, settledUpTo: 3050n })
    expect(await account(client.account.address)).toEqual({ funds: 96_500n, lockupCurrent: 0n, lockupRate: 0n, lockupLastSettledAt: 3051n })
    await expect(Pay.getRail(client, { railId })).rejects.toThrow(/RailInactiveOrSettled/)
  })

  it('pages a payer’s rails as the real contract does (limit 0 = all, finalized rails skipped but counted)', async () => {
    fx.setEpoch(4000)
    const client = await fundedClient('client-f', 10_000n)
    const payee = (await fx.wallet('provider-f')).account.address
    const ids = [await createRail(client, payee), await createRail(client, payee), await createRail(client, payee)]
    expect(await Pay.getRailsForPayerAndToken(client, { payer: client.account.address, offset: 1n, limit: 1n })).toEqual({
      results: [{ railId: ids[1], isTerminated: false, endEpoch: 0n }],
      nextOffset: 2n,
      total: 3n,
    })
    // a rail with no lockup period ends where the payer is settled: terminated, and finalized by the next
    // settle, which (already settled to its end) emits no RailSettled, as in the real contract
    await pay(operator, 'terminateRail', [ids[0]])
    await fx.publicClient.waitForTransactionReceipt({ hash: await Pay.settleRail(client, { railId: ids[0] }) })
    expect((await Pay.getRailsForPayerAndToken(client, { payer: client.account.address })).results.map((r) => r.railId)).toEqual([
      ids[1],
      ids[2],
    ])
    expect(await Pay.getRailsForPayerAndToken(client, { payer: client.account.address, offset: 5n })).toEqual({
      results: [],
      nextOffset: 3n,
      total: 3n,
    })
  })
})

/** A validator that grants half of what is proposed, up to an optional cap epoch, and records termination. */
const HALF_VALIDATOR = `
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;
contract HalfValidator {
    struct ValidationResult { uint256 modifiedAmount; uint256 settleUpto; string note; }
    uint256 public cap;
    uint256 private railId; address private terminator; uint256 private endEpoch;
    function setCap(uint256 epoch) external { cap = epoch; }
    function validatePayment(uint256, uint256, uint256 fromEpoch, uint256 toEpoch, uint256 rate)
        external view returns (ValidationResult memory result)
    {
        uint256 upTo = cap != 0 && cap < toEpoch ? cap : toEpoch;
        if (upTo < fromEpoch) upTo = fromEpoch;
        result = ValidationResult(rate * (upTo - fromEpoch) / 2, upTo, "half");
    }
    function railTerminated(uint256 id, address by, uint256 end) external {
        railId = id; terminator = by; endEpoch = end;
    }
    function heard() external view returns (uint256, address, uint256) { return (railId, terminator, endEpoch); }
}
`

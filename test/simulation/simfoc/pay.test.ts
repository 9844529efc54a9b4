/**
 * The Synapse SDK's own money functions (synapse-core erc20 and pay) against
 * our USDFC and Filecoin Pay on the simulated chain: deposits, permits,
 * operator approvals, withdrawals.
 */
import * as Abis from '@filoz/synapse-core/abis'
import { getChain } from '@filoz/synapse-core/chains'
import * as ERC20 from '@filoz/synapse-core/erc20'
import * as Pay from '@filoz/synapse-core/pay'
import { hashDomain, maxUint256, parseSignature, parseUnits, zeroAddress } from 'viem'
import { multicall } from 'viem/actions'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GENESIS, startPayChain, type PayChain } from './pay-fixture.ts'

const USDFC = (n: string) => parseUnits(n, 18)

describe('USDFC and Filecoin Pay through the Synapse SDK', () => {
  let fx: PayChain
  beforeAll(async () => {
    fx = await startPayChain()
    fx.setEpoch(100)
  })
  afterAll(async () => {
    await fx?.close()
  })

  it('points the SDK devnet entry, which depositWithPermit looks up by chain id, at our contracts', () => {
    const devnet = getChain(fx.chain.id)
    expect(devnet.contracts.usdfc.address).toBe(fx.addresses.usdfc)
    expect(devnet.contracts.filecoinPay.address).toBe(fx.addresses.filecoinPay)
    expect(fx.chain.genesisTimestamp).toBe(GENESIS)
  })

  it('USDFC answers the reads the SDK makes before a deposit, and its permit domain is the one the SDK signs', async () => {
    const alice = await fx.wallet('alice')
    await fx.mint(alice.account.address, USDFC('500'))
    expect(await ERC20.balance(alice, { address: alice.account.address })).toEqual({
      value: USDFC('500'),
      decimals: 18,
      symbol: 'USDFC',
      allowance: 0n,
    })
    expect(await ERC20.balanceForPermit(alice, { address: alice.account.address })).toEqual({
      value: USDFC('500'),
      name: 'USD for Filecoin Community',
      nonce: 0n,
      version: '1',
    })
    const separator = await fx.publicClient.readContract({
      address: fx.addresses.usdfc,
      abi: fx.artifacts.SimUsdfc.abi,
      functionName: 'DOMAIN_SEPARATOR',
    })
    expect(separator).toBe(
      hashDomain({
        domain: { name: 'USD for Filecoin Community', version: '1', chainId: BigInt(fx.chain.id), verifyingContract: fx.addresses.usdfc },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
        },
      }),
    )
  })

  it('only the deployer (the faucet) mints', async () => {
    const mallory = await fx.wallet('mallory')
    await expect(fx.send(mallory, fx.addresses.usdfc, fx.artifacts.SimUsdfc.abi, 'mint', [mallory.account.address, 1n])).rejects.toThrow(
      /OnlyMinter/,
    )
  })

  it('deposit after an ERC-20 approve credits the account and spends the allowance', async () => {
    const bob = await fx.wallet('bob')
    await fx.mint(bob.account.address, USDFC('100'))
    await ERC20.approveSync(bob, { amount: USDFC('60') })
    const { event } = await Pay.depositSync(bob, { amount: USDFC('40') })
    expect(event.args).toEqual({ token: fx.addresses.usdfc, from: bob.account.address, to: bob.account.address, amount: USDFC('40') })

    const account = await Pay.accounts(bob, { address: bob.account.address })
    expect(account).toEqual({
      funds: USDFC('40'),
      lockupCurrent: 0n,
      lockupRate: 0n,
      lockupLastSettledAt: 100n,
      availableFunds: USDFC('40'),
    })
    const tokens = await ERC20.balance(bob, { address: bob.account.address })
    expect(tokens.value).toBe(USDFC('60'))
    expect(tokens.allowance).toBe(USDFC('20'))
    expect(
      await fx.publicClient.readContract({
        address: fx.addresses.usdfc,
        abi: Abis.erc20,
        functionName: 'balanceOf',
        args: [fx.addresses.filecoinPay],
      }),
    ).toBeGreaterThanOrEqual(USDFC('40'))
  })

  it('a deposit beyond the allowance fails with the token error and changes nothing', async () => {
    const bob = await fx.wallet('bob')
    await expect(
      fx.send(bob, fx.addresses.filecoinPay, [...Abis.filecoinPay, ...fx.artifacts.SimUsdfc.abi], 'deposit', [
        fx.addresses.usdfc,
        bob.account.address,
        USDFC('21'),
      ]),
    ).rejects.toThrow(/ERC20InsufficientAllowance/)
    expect((await Pay.accounts(bob, { address: bob.account.address })).funds).toBe(USDFC('40'))
  })

  it('depositWithPermit pulls the tokens with a signed permit, without an approve, and spends the nonce', async () => {
    const carol = await fx.wallet('carol')
    await fx.mint(carol.account.address, USDFC('10'))
    const { event } = await Pay.depositWithPermitSync(carol, { amount: USDFC('7.5') })
    expect(event.args.amount).toBe(USDFC('7.5'))
    expect((await Pay.accounts(carol, { address: carol.account.address })).funds).toBe(USDFC('7.5'))
    const after = await ERC20.balanceForPermit(carol, { address: carol.account.address })
    expect(after.value).toBe(USDFC('2.5'))
    expect(after.nonce).toBe(1n)
    // the permit's allowance was used up by the transfer
    expect((await ERC20.balance(carol, { address: carol.account.address })).allowance).toBe(0n)
  })

  it('refuses a permit replayed, signed by someone else, or past its deadline (block time, not wall time)', async () => {
    const dave = await fx.wallet('dave')
    const erin = await fx.wallet('erin')
    await fx.mint(dave.account.address, USDFC('10'))
    const deadline = BigInt(GENESIS + 100 * 30 + 3600)
    const sign = (nonce: bigint, signer = dave, at = deadline) =>
      signer.signTypedData({
        domain: { name: 'USD for Filecoin Community', version: '1', chainId: fx.chain.id, verifyingContract: fx.addresses.usdfc },
        types: {
          Permit: [
            { name: 'owner', type: 'address' },
            { name: 'spender', type: 'address' },
            { name: 'value', type: 'uint256' },
            { name: 'nonce', type: 'uint256' },
            { name: 'deadline', type: 'uint256' },
          ],
        },
        primaryType: 'Permit',
        message: { owner: dave.account.address, spender: fx.addresses.filecoinPay, value: USDFC('1'), nonce, deadline: at },
      })
    const abi = [...Abis.filecoinPay, ...fx.artifacts.SimUsdfc.abi]
    const deposit = (signature: `0x${string}`, at = deadline) => {
      const { v, r, s } = parseSignature(signature)
      return fx.send(dave, fx.addresses.filecoinPay, abi, 'depositWithPermit', [
        fx.addresses.usdfc,
        dave.account.address,
        USDFC('1'),
        at,
        Number(v),
        r,
        s,
      ])
    }
    const good = await sign(0n)
    await deposit(good)
    await expect(deposit(good)).rejects.toThrow(/ERC2612InvalidSigner/)
    await expect(deposit(await sign(1n, erin))).rejects.toThrow(/ERC2612InvalidSigner/)
    const stale = BigInt(GENESIS + 100 * 30 - 1)
    await expect(deposit(await sign(1n, dave, stale), stale)).rejects.toThrow(/ERC2612ExpiredSignature/)
    expect((await Pay.accounts(dave, { address: dave.account.address })).funds).toBe(USDFC('1'))
  })

  it('depositAndApprove deposits with a permit and approves an operator in one transaction', async () => {
    const frank = await fx.wallet('frank')
    const operator = await fx.wallet('operator')
    await fx.mint(frank.account.address, USDFC('30'))
    const hash = await Pay.depositAndApprove(frank, {
      amount: USDFC('30'),
      operator: operator.account.address,
      rateAllowance: 1000n,
      lockupAllowance: 50_000n,
      maxLockupPeriod: 2880n,
    })
    expect((await fx.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success')
    expect((await Pay.accounts(frank, { address: frank.account.address })).funds).toBe(USDFC('30'))
    expect(await Pay.operatorApprovals(frank, { address: frank.account.address, operator: operator.account.address })).toEqual({
      isApproved: true,
      rateAllowance: 1000n,
      lockupAllowance: 50_000n,
      rateUsage: 0n,
      lockupUsage: 0n,
      maxLockupPeriod: 2880n,
    })
  })

  it('setOperatorApproval approves and revokes, and operatorApprovals reads it back', async () => {
    const grace = await fx.wallet('grace')
    const operator = await fx.wallet('operator')
    const { event } = await Pay.setOperatorApprovalSync(grace, {
      operator: operator.account.address,
      approve: true,
      rateAllowance: maxUint256,
      lockupAllowance: maxUint256,
      maxLockupPeriod: 86_400n,
    })
    expect(event.args).toMatchObject({
      client: grace.account.address,
      operator: operator.account.address,
      approved: true,
      maxLockupPeriod: 86_400n,
    })
    expect((await Pay.operatorApprovals(grace, { address: grace.account.address, operator: operator.account.address })).rateAllowance).toBe(
      maxUint256,
    )
    await Pay.setOperatorApprovalSync(grace, {
      operator: operator.account.address,
      approve: false,
      rateAllowance: 0n,
      lockupAllowance: 0n,
      maxLockupPeriod: 0n,
    })
    expect((await Pay.operatorApprovals(grace, { address: grace.account.address, operator: operator.account.address })).isApproved).toBe(
      false,
    )
    await expect(
      fx.send(grace, fx.addresses.filecoinPay, Abis.filecoinPay, 'setOperatorApproval', [
        fx.addresses.usdfc,
        zeroAddress,
        true,
        1n,
        1n,
        1n,
      ]),
    ).rejects.toThrow(/ZeroAddressNotAllowed/)
  })

  it('withdraw returns unlocked funds to the wallet', async () => {
    const bob = await fx.wallet('bob')
    fx.setEpoch(120)
    const { event } = await Pay.withdrawSync(bob, { amount: USDFC('15') })
    expect(event.args).toEqual({ token: fx.addresses.usdfc, from: bob.account.address, to: bob.account.address, amount: USDFC('15') })
    expect((await Pay.accounts(bob, { address: bob.account.address })).funds).toBe(USDFC('25'))
    expect((await ERC20.balance(bob, { address: bob.account.address })).value).toBe(USDFC('75'))
    await expect(fx.send(bob, fx.addresses.filecoinPay, Abis.filecoinPay, 'withdraw', [fx.addresses.usdfc, USDFC('26')])).rejects.toThrow(
      /InsufficientUnlockedFunds/,
    )
  })

  it('Multicall3 batches reads as viem multicall expects, with and without allowed failures', async () => {
    const bob = await fx.wallet('bob')
    const results = await multicall(fx.publicClient, {
      contracts: [Pay.accountsCall({ chain: fx.chain, address: bob.account.address }), Pay.getRailCall({ chain: fx.chain, railId: 999n })],
    })
    expect(results[0]).toMatchObject({ status: 'success', result: [USDFC('25'), 0n, 0n, 120n] })
    expect(results[1].status).toBe('failure')
    await expect(
      multicall(fx.publicClient, { allowFailure: false, contracts: [Pay.getRailCall({ chain: fx.chain, railId: 999n })] }),
    ).rejects.toThrow()
  })
})

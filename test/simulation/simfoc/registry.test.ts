/**
 * The Synapse SDK's provider-registry, endorsement and session-key functions
 * (synapse-core sp-registry, endorsements, session-key) against our
 * ServiceProviderRegistry, ProviderIdSet and SessionKeyRegistry.
 */
import * as Abis from '@filoz/synapse-core/abis'
import { getEndorsedProviderIds } from '@filoz/synapse-core/endorsements'
import * as SessionKey from '@filoz/synapse-core/session-key'
import * as SP from '@filoz/synapse-core/sp-registry'
import { parseEther, stringToHex, type Abi, type Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startPayChain, type PayChain } from './pay-fixture.ts'

const BURN_ADDRESS = '0xff00000000000000000000000000000000000063'

describe('provider registry, endorsements and session keys through the Synapse SDK', () => {
  let fx: PayChain
  beforeAll(async () => {
    fx = await startPayChain()
    fx.setEpoch(50)
  })
  afterAll(async () => {
    await fx?.close()
  })

  const offering = (usdfc: Address, serviceURL = 'http://127.0.0.1:4701'): SP.PDPOffering => ({
    serviceURL,
    minPieceSizeInBytes: 127n,
    maxPieceSizeInBytes: 1_065_353_216n,
    storagePricePerTibPerDay: 83_333_333_333_333_333n,
    minProvingPeriodInEpochs: 60n,
    location: 'C=FR;ST=Île-de-France;L=Paris',
    paymentTokenAddress: usdfc,
    ipniPiece: true,
    ipniIpfs: false,
  })
  const registry = () => fx.addresses.serviceProviderRegistry
  const registryAbi = Abis.serviceProviderRegistry as Abi

  it('registerProvider burns the fee, and getPDPProviders and getPDPProvider decode what was registered', async () => {
    const alpha = await fx.wallet('provider-alpha')
    const payee = await fx.wallet('payee-alpha')
    const burntBefore = await fx.publicClient.getBalance({ address: BURN_ADDRESS })
    const { event } = await SP.registerProviderSync(alpha, {
      payee: payee.account.address,
      name: 'alpha',
      description: 'simulated Curio, Paris',
      pdpOffering: offering(fx.addresses.usdfc),
      capabilities: { region: 'eu-west' },
    })
    expect(event.args).toEqual({ providerId: 1n, serviceProvider: alpha.account.address, payee: payee.account.address })
    expect((await fx.publicClient.getBalance({ address: BURN_ADDRESS })) - burntBefore).toBe(parseEther('5'))

    const expected = {
      id: 1n,
      serviceProvider: alpha.account.address,
      payee: payee.account.address,
      name: 'alpha',
      description: 'simulated Curio, Paris',
      isActive: true,
      pdp: {
        ...offering(fx.addresses.usdfc),
        // the SDK decodes the token address in lower case
        paymentTokenAddress: fx.addresses.usdfc.toLowerCase(),
        ipniPeerId: undefined,
        extraCapabilities: { region: stringToHex('eu-west') },
      },
    }
    expect(await SP.getPDPProviders(alpha)).toEqual({ providers: [expected], hasMore: false })
    expect(await SP.getPDPProvider(alpha, { providerId: 1n })).toEqual(expected)
    expect(await SP.getPDPProviderByAddress(alpha, { address: alpha.account.address })).toEqual(expected)
    expect(await SP.getProviderIdByAddress(alpha, { providerAddress: alpha.account.address })).toBe(1n)
    expect(await SP.isRegisteredProvider(alpha, { provider: alpha.account.address })).toBe(true)
    expect(await SP.isProviderActive(alpha, { providerId: 1n })).toBe(true)
    expect(await SP.activeProviderCount(alpha)).toBe(1n)
    expect(await SP.getProviderCount(alpha)).toBe(1n)
  })

  it('answers "no such provider" the way the SDK recognizes (null), and refuses bad registrations', async () => {
    const alpha = await fx.wallet('provider-alpha')
    const beta = await fx.wallet('provider-beta')
    expect(await SP.getPDPProvider(beta, { providerId: 99n })).toBeNull()
    expect(await SP.getProviderIdByAddress(beta, { providerAddress: beta.account.address })).toBeNull()
    expect(await SP.isRegisteredProvider(beta, { provider: beta.account.address })).toBe(false)

    await expect(
      SP.registerProvider(alpha, {
        payee: alpha.account.address,
        name: 'again',
        description: '',
        pdpOffering: offering(fx.addresses.usdfc),
      }),
    ).rejects.toThrow(/already a provider/)
    await expect(
      SP.registerProvider(beta, {
        payee: beta.account.address,
        name: 'beta',
        description: '',
        pdpOffering: offering(fx.addresses.usdfc),
        value: parseEther('1'),
      }),
    ).rejects.toThrow(/registration fee/)
    // six of the seven keys the PDP product requires
    const keys = [
      'serviceURL',
      'minPieceSizeInBytes',
      'maxPieceSizeInBytes',
      'storagePricePerTibPerDay',
      'minProvingPeriodInEpochs',
      'location',
    ]
    await expect(
      fx.send(
        beta,
        registry(),
        registryAbi,
        'registerProvider',
        [beta.account.address, 'beta', '', 0, keys, keys.map(() => '0x01')],
        parseEther('5'),
      ),
    ).rejects.toThrow(/InsufficientCapabilitiesForProduct/)
    expect(await SP.getProviderCount(beta)).toBe(1n)
  })

  it('updates the provider and its product, removes and re-adds the product, and removes the provider', async () => {
    const alpha = await fx.wallet('provider-alpha')
    const beta = await fx.wallet('provider-beta')
    await SP.registerProviderSync(beta, {
      payee: beta.account.address,
      name: 'beta',
      description: 'second',
      pdpOffering: offering(fx.addresses.usdfc, 'http://127.0.0.1:4702'),
    })
    expect((await SP.getPDPProviders(beta)).providers.map((p) => p.id)).toEqual([1n, 2n])
    expect(await SP.getPDPProviders(beta, { offset: 1n, limit: 1n })).toMatchObject({ providers: [{ id: 2n }], hasMore: false })
    expect(await SP.getPDPProviders(beta, { offset: 0n, limit: 1n })).toMatchObject({ providers: [{ id: 1n }], hasMore: true })

    await SP.updateProviderInfoSync(alpha, { name: 'alpha-2', description: 'moved' })
    await SP.updateProductSync(alpha, { pdpOffering: offering(fx.addresses.usdfc, 'http://127.0.0.1:4799') })
    const updated = await SP.getPDPProvider(alpha, { providerId: 1n })
    expect(updated).toMatchObject({
      name: 'alpha-2',
      description: 'moved',
      pdp: { serviceURL: 'http://127.0.0.1:4799', extraCapabilities: {} },
    })
    // the old extra capability is gone from storage, not only from the key list
    expect(
      await fx.publicClient.readContract({
        address: registry(),
        abi: registryAbi,
        functionName: 'productCapabilities',
        args: [1n, 0, 'region'],
      }),
    ).toBe('0x')

    await SP.removeProductSync(alpha)
    expect(await SP.getPDPProvider(alpha, { providerId: 1n })).toBeNull()
    expect((await SP.getPDPProviders(alpha)).providers.map((p) => p.id)).toEqual([2n])
    await SP.addProductSync(alpha, { pdpOffering: offering(fx.addresses.usdfc) })
    expect((await SP.getPDPProvider(alpha, { providerId: 1n }))?.pdp.serviceURL).toBe('http://127.0.0.1:4701')

    await SP.removeProviderSync(beta)
    expect(await SP.isRegisteredProvider(beta, { provider: beta.account.address })).toBe(false)
    expect(await SP.isProviderActive(beta, { providerId: 2n })).toBe(false)
    expect(await SP.getPDPProvider(beta, { providerId: 2n })).toBeNull()
    expect(await SP.activeProviderCount(beta)).toBe(1n)
    expect(await SP.getProviderCount(beta)).toBe(2n)
    expect((await SP.getPDPProviders(beta)).providers.map((p) => p.id)).toEqual([1n])
    // FWSS asks the registry for a provider's id and payee
    expect(
      await fx.publicClient.readContract({ address: registry(), abi: registryAbi, functionName: 'getProviderPayee', args: [1n] }),
    ).toBe((await fx.wallet('payee-alpha')).account.address)
    await expect(SP.updateProviderInfo(beta, { name: 'ghost', description: '' })).rejects.toThrow(/not a registered provider/)
  })

  it('endorsements: the deployer keeps the list, the SDK reads it', async () => {
    const deployer = await fx.wallet('deployer')
    const stranger = await fx.wallet('stranger')
    const abi = Abis.providerIdSet as Abi
    expect(await getEndorsedProviderIds(deployer)).toEqual([])
    for (const id of [3n, 1n, 3n, 7n]) await fx.send(deployer, fx.addresses.endorsements, abi, 'addProviderId', [id])
    expect(await getEndorsedProviderIds(deployer)).toEqual([3n, 1n, 7n])
    await fx.send(deployer, fx.addresses.endorsements, abi, 'removeProviderId', [3n])
    expect(await getEndorsedProviderIds(deployer)).toEqual([7n, 1n])
    await expect(fx.send(stranger, fx.addresses.endorsements, abi, 'addProviderId', [2n])).rejects.toThrow(/OwnableUnauthorizedAccount/)
    await expect(fx.send(deployer, fx.addresses.endorsements, abi, 'addProviderId', [2n ** 32n])).rejects.toThrow(/ProviderIdTooLarge/)
    expect(await fx.publicClient.readContract({ address: fx.addresses.endorsements, abi, functionName: 'owner' })).toBe(
      deployer.account.address,
    )
  })

  it('session keys: login authorizes the FWSS permissions until an expiry, revoke clears them', async () => {
    const user = await fx.wallet('session-user')
    const sessionKey = (await fx.wallet('session-key')).account.address
    const expiresAt = 1_800_000_000n
    const { event } = await SessionKey.loginSync(user, { address: sessionKey, expiresAt })
    expect(event.args).toMatchObject({ identity: user.account.address, signer: sessionKey, expiry: expiresAt, origin: 'synapse' })
    for (const permission of SessionKey.DefaultFwssPermissions) {
      expect(await SessionKey.authorizationExpiry(user, { address: user.account.address, sessionKeyAddress: sessionKey, permission })).toBe(
        expiresAt,
      )
    }
    await SessionKey.revokeSync(user, { address: sessionKey, permissions: [SessionKey.AddPiecesPermission] })
    expect(
      await SessionKey.authorizationExpiry(user, {
        address: user.account.address,
        sessionKeyAddress: sessionKey,
        permission: SessionKey.AddPiecesPermission,
      }),
    ).toBe(0n)
    expect(
      await SessionKey.authorizationExpiry(user, {
        address: user.account.address,
        sessionKeyAddress: sessionKey,
        permission: SessionKey.CreateDataSetPermission,
      }),
    ).toBe(expiresAt)
  })
})

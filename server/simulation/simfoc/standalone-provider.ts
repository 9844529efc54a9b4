import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPublicClient, formatEther, http, parseAbi, parseUnits, type Address, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import type { Logger } from '../../shared/logger.ts'
import { createViemPdpChain, registerPdpProvider } from './pdp-provider-chain.ts'
import { createPdpProvider, type PdpProvider } from './pdp-provider.ts'

/** The terms every simulated provider offers: calibration's usual (2.5 USDFC per TiB-month is FWSS's list price). */
export const SIMULATED_OFFERING = {
  minPieceSizeInBytes: 127n,
  maxPieceSizeInBytes: ((1n << 30n) / 128n) * 127n,
  storagePricePerTibPerDay: parseUnits('0.1', 18),
  location: 'loopback',
}

/** Where a devnet's contracts are, as far as a provider needs them. */
export interface ProviderContracts {
  pdp: Address
  fwss: Address
  fwssView: Address
  serviceProviderRegistry: Address
  usdfc: Address
}

export interface StandaloneProviderOptions {
  /** The devnet's FEVM JSON-RPC. */
  rpcUrl: string
  /** The warm storage service's address (its proxy): the other contracts are read from it. */
  fwss: Address
  /** The provider's key (`key`, made at the first start, mode 0600), database, pieces and port. */
  dir: string
  /** Its PDP API's port (default: the one it registered, else a free one). */
  port?: number
  host?: string
  name?: string
  logger?: Logger
}

export interface StandaloneProvider {
  providerId: bigint
  address: Address
  url: string
  provider: PdpProvider
  close(): Promise<void>
}

export class ProviderNotFunded extends Error {
  override name = 'ProviderNotFunded'
}

const abi = parseAbi([
  'function getPDPConfig() view returns (uint64 maxProvingPeriod, uint256 challengeWindow, uint256 challengesPerProof, uint256 initChallengeWindowStart)',
  'function REGISTRATION_FEE() view returns (uint256)',
  'function viewContractAddress() view returns (address)',
  'function pdpVerifierAddress() view returns (address)',
  'function serviceProviderRegistry() view returns (address)',
  'function usdfcTokenAddress() view returns (address)',
])

/** The contracts a provider works with, as the warm storage service names them now (its getters: a migration moves the view). */
async function contractsOf(chain: ReturnType<typeof createPublicClient>, fwss: Address): Promise<ProviderContracts> {
  const read = (functionName: 'viewContractAddress' | 'pdpVerifierAddress' | 'serviceProviderRegistry' | 'usdfcTokenAddress') =>
    chain.readContract({ address: fwss, abi, functionName })
  const [fwssView, pdp, serviceProviderRegistry, usdfc] = await Promise.all([
    read('viewContractAddress'),
    read('pdpVerifierAddress'),
    read('serviceProviderRegistry'),
    read('usdfcTokenAddress'),
  ])
  return { fwss, fwssView, pdp, serviceProviderRegistry, usdfc }
}

/** The provider's key: kept in `dir/key`, made once. */
function keyIn(dir: string): Hex {
  const file = join(dir, 'key')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim() as Hex
  const key = generatePrivateKey()
  writeFileSync(file, `${key}\n`, { mode: 0o600 })
  return key
}

/**
 * A simulated Curio PDP provider on someone else's chain, as an operator
 * runs Curio there: it serves the PDP API, registers itself in the chain's
 * ServiceProviderRegistry with its own key (paying the registration fee, as
 * Curio's pdp/contract/utils.go FSRegister does), offering the proving period
 * the warm storage service asks (its view's getPDPConfig), and follows the
 * chain from then on. Approval and endorsement are the service owner's.
 */
export async function runStandaloneProvider(o: StandaloneProviderOptions): Promise<StandaloneProvider> {
  mkdirSync(o.dir, { recursive: true, mode: 0o700 })
  const privateKey = keyIn(o.dir)
  const address = privateKeyToAccount(privateKey).address
  const chain = createPublicClient({ transport: http(o.rpcUrl, { retryCount: 0 }) })
  const contracts = await contractsOf(chain, o.fwss)
  const [balance, fee, [maxProvingPeriod]] = await Promise.all([
    chain.getBalance({ address }),
    chain.readContract({ address: contracts.serviceProviderRegistry, abi, functionName: 'REGISTRATION_FEE' }),
    chain.readContract({ address: contracts.fwssView, abi, functionName: 'getPDPConfig' }),
  ])
  if (balance <= fee) {
    throw new ProviderNotFunded(
      `the provider's address ${address} holds ${formatEther(balance)} FIL on the devnet: send it the registration fee (${formatEther(fee)} FIL) and gas, then start it again`,
    )
  }
  const provider = await createPdpProvider({
    dir: o.dir,
    chain: createViemPdpChain({ rpcUrl: o.rpcUrl, privateKey, pdpVerifier: contracts.pdp }),
    recordKeepers: [contracts.fwss],
    log: o.logger,
  })
  try {
    const portFile = join(o.dir, 'port')
    const url = await provider.listen(o.port ?? (existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : 0), o.host)
    writeFileSync(portFile, String(new URL(url).port))
    const providerId = await registerPdpProvider({
      rpcUrl: o.rpcUrl,
      privateKey,
      serviceProviderRegistry: contracts.serviceProviderRegistry,
      name: o.name ?? `sim-curio-${address.slice(2, 10).toLowerCase()}`,
      description: 'simulated Curio PDP provider',
      offering: {
        ...SIMULATED_OFFERING,
        minProvingPeriodInEpochs: maxProvingPeriod,
        serviceURL: url,
        paymentTokenAddress: contracts.usdfc,
      },
    })
    return { providerId, address, url, provider, close: () => provider.close() }
  } catch (err) {
    await provider.close()
    throw err
  }
}

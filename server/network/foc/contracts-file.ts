import { z } from 'zod'
import type { FocContracts } from '../../shared/foc-contracts.ts'

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an address (0x and 40 hex digits)') as z.ZodType<`0x${string}`>

/** Ours: the simulated Onchain Cloud's `<DATA_DIR>/simfoc/contracts.json`, one address per contract; other keys are ignored. */
const OwnFile = z.object({
  multicall3: address,
  usdfc: address,
  filecoinPay: address,
  fwss: address,
  fwssView: address,
  serviceProviderRegistry: address,
  sessionKeyRegistry: address,
  pdp: address,
  endorsements: address,
})

/**
 * FilOzone foc-devnet's export, `devnet-info.json` (versions 1 and 2), as
 * synapse-core reads it (src/devnet/schema.ts): the proxies are the
 * contracts' addresses; the rest of the file (users, keys, containers) is not read.
 */
const FocDevnetInfo = z.object({
  version: z.union([z.literal(1), z.literal(2)]),
  info: z.object({
    contracts: z.object({
      multicall3_addr: address,
      mockusdfc_addr: address,
      filecoin_pay_v1_addr: address,
      fwss_service_proxy_addr: address,
      fwss_state_view_addr: address,
      service_provider_registry_proxy_addr: address,
      session_key_registry_addr: address,
      pdp_verifier_proxy_addr: address,
      endorsements_addr: address,
    }),
  }),
})

/**
 * Where a devnet's Onchain Cloud contracts are, from the text of its
 * addresses file in either shape; throws an Error saying what is missing or
 * malformed.
 */
export function parseFocContracts(text: string): FocContracts {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new Error('not JSON')
  }
  const own = OwnFile.safeParse(json)
  if (own.success) return own.data
  const devnet = FocDevnetInfo.safeParse(json)
  if (devnet.success) {
    const c = devnet.data.info.contracts
    return {
      multicall3: c.multicall3_addr,
      usdfc: c.mockusdfc_addr,
      filecoinPay: c.filecoin_pay_v1_addr,
      fwss: c.fwss_service_proxy_addr,
      fwssView: c.fwss_state_view_addr,
      serviceProviderRegistry: c.service_provider_registry_proxy_addr,
      sessionKeyRegistry: c.session_key_registry_addr,
      pdp: c.pdp_verifier_proxy_addr,
      endorsements: c.endorsements_addr,
    }
  }
  // Said in our own shape's words: the one the README documents.
  const problems = own.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`)
  throw new Error(`not a file of contract addresses (${problems.join('; ')})`)
}

import { z } from 'zod'
import type { FocAnchors } from './deployment.ts'

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an address (0x and 40 hex digits)') as z.ZodType<`0x${string}`>

/**
 * Ours: the simulated Onchain Cloud's `<DATA_DIR>/simfoc/contracts.json`, one address per
 * contract. Only the anchors are read; the other addresses it lists (the view, PDPVerifier, …)
 * are read from FWSS on chain instead, since a migration moves them.
 */
const OwnFile = z.object({ fwss: address, multicall3: address, endorsements: address })

/**
 * FilOzone foc-devnet's export, `devnet-info.json` (versions 1 and 2), as
 * synapse-core reads it (src/devnet/schema.ts): the warm storage service's
 * proxy, Multicall3 and the endorsement set; the rest of the file (the other
 * contracts, users, keys, containers) is not read.
 */
const FocDevnetInfo = z.object({
  version: z.union([z.literal(1), z.literal(2)]),
  info: z.object({
    contracts: z.object({ multicall3_addr: address, fwss_service_proxy_addr: address, endorsements_addr: address }),
  }),
})

/**
 * Where to find a devnet's Onchain Cloud, from the text of its addresses
 * file in either shape; throws an Error saying what is missing or malformed.
 */
export function parseFocContracts(text: string): FocAnchors {
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
    return { fwss: c.fwss_service_proxy_addr, multicall3: c.multicall3_addr, endorsements: c.endorsements_addr }
  }
  // Said in our own shape's words: the one the README documents.
  const problems = own.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`)
  throw new Error(`not a file of contract addresses (${problems.join('; ')})`)
}

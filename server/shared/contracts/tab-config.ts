import { z } from 'zod'
import { NETWORK_NAMES } from './network.ts'

/** `GET /ocs/v2.php/apps/gateway/config`: what the sidebar tab needs for links and dates, for any logged-in user. */
export const TabConfigSchema = z.object({
  network: z.enum(NETWORK_NAMES),
  ipfsGateway: z.string().describe('Base URL of an IPFS HTTP gateway, e.g. https://ipfs.io; empty for none'),
  genesisTimestamp: z.number().int().describe('Unix seconds of epoch 0, to turn deal end epochs into dates'),
  epochSeconds: z.number().positive().describe('Wall-clock seconds per epoch: 30, or less on a sped-up simulated network'),
  speed: z.string().optional().describe('A sped-up simulated network\'s pace in words ("1 minute ≈ 5 hours"); absent in real time'),
})

export const TabConfigResponseSchema = z.object({
  success: z.literal(true),
  config: TabConfigSchema,
})

export type TabConfig = z.infer<typeof TabConfigSchema>
export type TabConfigResponse = z.infer<typeof TabConfigResponseSchema>

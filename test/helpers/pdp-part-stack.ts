import { join } from 'node:path'
import type { Logger } from 'pino'
import { runService } from '../../server/compose/service.ts'
import { openKeystore } from '../../server/network/wallet/keystore.ts'
import { loadConfig } from '../../server/shared/config.ts'

/**
 * The deal service part (the simulated chain and Onchain Cloud) run in the
 * test's own process, logging to `logger`, and the environment of a gateway
 * part, PDP copies only, to run as a child against it: for tests that kill
 * the gateway on a line the simulation logs (e2e/pdp-kill, e2e/compact-kill).
 */
export async function startPdpService(o: {
  dataDir: string
  logger: Logger
  speed: string
  providers: number
  copies: number
  user: string
  password: string
}): Promise<{ service: Awaited<ReturnType<typeof runService>>; env: Record<string, string>; walletAddress: `0x${string}` }> {
  // The gateway's wallet, which pays for the PDP copies.
  const wallet = openKeystore(join(o.dataDir, 'wallet'), 'mainnet').create()
  const common = { DATA_DIR: o.dataDir, SIMNET_SPEED: o.speed, SIMFOC_PROVIDERS: String(o.providers) }
  const service = await runService(loadConfig({ ...common, SERVICE_PORT: '0', SIMNET_RPC_PORT: '0', SIMFOC_RPC_PORT: '0' }), o.logger)
  const env = {
    ...common,
    GATEWAY_PORT: '0',
    GATEWAY_USER: o.user,
    GATEWAY_PASSWORD: o.password,
    SERVICE_URL: service.url,
    SIMNET_RPC_URL: service.rpcUrl!,
    SIMFOC_RPC_URL: service.focRpcUrl!,
    DEAL_COPIES: '0',
    PDP_COPIES: String(o.copies),
    FOC_AUTO_DEPOSIT: 'true',
    GROUP_IDLE_SECONDS: '1',
    DEAL_TICK_SECONDS: '0.2',
  }
  return { service, env, walletAddress: wallet.ethAddress }
}

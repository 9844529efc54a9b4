import type { Config } from '../shared/config.ts'
import { networkClock } from '../shared/epochs.ts'
import { startServer } from '../shared/http.ts'
import type { Faults } from '../shared/faults.ts'
import type { Logger } from '../shared/logger.ts'
import {
  acquireDataFolder,
  connectToNetwork,
  createGateway,
  whyNotPublic,
  whyProvidersCannotFetch,
  type NetworkAccess,
} from '../gateway/index.ts'
import { devnetClock, devnetMiners } from '../network/index.ts'
import type { FocClient } from '../network/foc/client.ts'
import { savedSimnetClock, walletEvmAccount, walletSigner } from './local-chain.ts'
import { checkNodeNetwork } from './node-network.ts'
import { connectOnchainCloud, OnchainCloudNotReady } from './onchain-cloud.ts'
import { serverOptions, type Part } from './part.ts'

/**
 * `--role gateway`: the gateway on GATEWAY_PORT, making copies on each storage route it can reach: deals
 * when it reaches a chain, providers and the deal service, PDP copies when it reaches the Onchain Cloud.
 * With the deal market off (DEAL_COPIES=0) its chain is never asked, and the Onchain Cloud's is all it reads.
 */
export async function runGateway(config: Config, logger: Logger, faults?: Faults): Promise<Part> {
  const dataLock = await acquireDataFolder(config.gateway.dataDir, 15_000, (message) => logger.warn(message))
  const access = config.gateway.deals?.copies !== 0 ? await networkAccess(config, logger) : undefined
  const foc = await onchainCloudAccess(config, logger)
  const gateway = await createGateway(
    { ...config.gateway, clientAddress: access?.clientAddress },
    { logger, providers: access?.port, foc, dataLock, faults },
  )
  const server = await startServer(gateway.app, config.gateway.port, config.gateway.host, serverOptions(config, logger))
  gateway.startDeals(server.url)
  logger.info(
    {
      url: server.url,
      dataDir: config.gateway.dataDir,
      records: config.gateway.databaseUrl ? 'PostgreSQL schema gateway' : 'gateway.sqlite',
      deals: gateway.deals !== undefined,
      routes: gateway.deals?.routes ?? [],
      ...(access ? { chain: config.chain.gatewayRpc?.url } : {}),
      ...(foc ? { onchainCloud: foc.chain.rpcUrls.default.http[0] } : {}),
    },
    'gateway listening (WebDAV and POST /file-info)',
  )
  return {
    name: 'gateway',
    url: server.url,
    server,
    async close() {
      await gateway.close()
      await access?.close()
    },
  }
}

/**
 * The Filecoin Onchain Cloud the gateway stores PDP copies on, paid by the
 * wallet key's FEVM account: FOC_RPC_URL, else the simulated one the stack
 * runs, its chain's clock read once here (the copies are timed and dated by
 * it). Undefined (deal market only) with PDP_COPIES=0, without a key, or
 * when its node does not answer or its clock cannot be read yet, which the
 * log says. A chain that is not the network's, or contracts that are not
 * GA, stop the start (a ConfigError naming the setting): nothing could be
 * stored there.
 */
async function onchainCloudAccess(config: Config, logger: Logger): Promise<FocClient | undefined> {
  if (!config.gateway.pdp?.copies) return undefined
  // On the simulated network and a devnet the key is made at the first start, as for deals.
  walletSigner(config)
  const account = walletEvmAccount(config)
  if (!account) {
    logger.error('no wallet key: PDP copies are off until one is made or imported (npm run wallet -- new | import)')
    return undefined
  }
  try {
    const client = await connectOnchainCloud(config, account, { logger })
    const rpc = client.chain.rpcUrls.default.http[0]
    const clock = await client.chainClock().catch((err: Error) => {
      throw new OnchainCloudNotReady(`the clock of the Onchain Cloud's chain at ${rpc} cannot be read: ${err.message}`)
    })
    const { chainId, contracts, versions } = client.deployment()
    logger.info(
      { payer: account.address, rpc, chainId, contracts, versions, copies: config.gateway.pdp.copies, epochSeconds: clock.epochSeconds },
      'PDP copies on Filecoin Onchain Cloud, paid by the wallet key; its contracts as the warm storage service names them',
    )
    return client
  } catch (err) {
    if (!(err instanceof OnchainCloudNotReady)) throw err
    logger.error(`PDP copies are off: ${err.message}`)
    return undefined
  }
}

/**
 * How the gateway reaches the network: the chain through Lotus JSON-RPC (the
 * simulated chain's, SIMNET_RPC_URL, or LOTUS_URL) and providers through the
 * Boost protocols, signing with its wallet key. Undefined (no deals) without
 * a chain or a key, which the log says.
 */
async function networkAccess(config: Config, logger: Logger): Promise<(NetworkAccess & { clientAddress: string }) | undefined> {
  const rpc = config.chain.gatewayRpc
  if (!rpc) return undefined
  const network = config.service.network
  // Real providers fetch CARs from GATEWAY_PUBLIC_URL: a loopback or private one would make every deal fail.
  const notPublic = config.chain.publicUrlRequired ? whyNotPublic(config.gateway.publicUrl) : null
  if (notPublic) {
    logger.error(
      `deals are off: ${notPublic}; storage providers on ${network} must be able to fetch CARs from it (set it to this gateway's public https URL)`,
    )
    return undefined
  }
  if (!rpc.simulated) await checkNodeNetwork(rpc, network, logger)
  const signer = walletSigner(config)
  if (!signer) {
    logger.error('no wallet key: deals are off until one is made or imported (npm run wallet -- new | import)')
    return undefined
  }
  const clock = rpc.simulated
    ? savedSimnetClock(config)!
    : network === 'devnet'
      ? await devnetClock({ url: rpc.url, token: rpc.token })
      : networkClock(network)
  const access = await connectToNetwork({ rpcUrl: rpc.url, token: rpc.token, clock, signer, network: config.chain.addressNetwork })
  // A devnet's providers may sit in containers, for which this machine's loopback is their own.
  const unreachable = network === 'devnet' && !rpc.simulated ? await whyDevnetCannotFetch(config, rpc, access) : null
  if (unreachable) {
    logger.error(`deals are off: ${unreachable}`)
    await access.close()
    return undefined
  }
  logger.info({ clientAddress: signer.address, chain: rpc.url }, 'deals are signed by the wallet key')
  return { ...access, clientAddress: signer.address }
}

/** Why the devnet's providers (its miners, as their miner info publishes them) could not fetch CARs from the transfer URL. */
async function whyDevnetCannotFetch(config: Config, rpc: { url: string; token?: string }, access: NetworkAccess): Promise<string | null> {
  const transferUrl = config.gateway.publicUrl ?? `http://${config.gateway.host}:${config.gateway.port}`
  // A devnet has a handful of miners; more would be no devnet's.
  // A node that cannot list them (a gateway API without StateListMiners) leaves nothing to compare.
  const miners = (await devnetMiners(rpc).catch(() => [])).slice(0, 100)
  const infos = await Promise.all(miners.map((id) => access.chain.minerInfo(id).catch(() => null)))
  return whyProvidersCannotFetch(
    transferUrl,
    infos.flatMap((info) => (info ? [{ id: info.id, multiaddrs: info.multiaddrs }] : [])),
  )
}

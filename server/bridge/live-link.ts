import { networkClock, type NetworkClock } from '../shared/epochs.ts'
import { createGatewayClient, type GatewayClient } from './gateway-client.ts'
import { createMountMap, type MountMap } from './mount-map.ts'
import { createPathMap, type PathMap } from './path-map.ts'
import { createReportedNetwork, type ReportedNetwork } from './gateway-network.ts'
import type { NetworkName } from '../shared/contracts/network.ts'
import type { EffectiveLink, SettingsStore } from './settings-store.ts'

/**
 * The gateway client, path map and network clock the routes use, following
 * the saved settings: each is a thin facade over an instance rebuilt when an
 * admin saves, so the routes keep their plain `GatewayClient`/`PathMap`/
 * `NetworkClock` types and pick up a change on their next request.
 */
export interface LiveLink {
  gateway: GatewayClient
  pathMap: PathMap
  mounts: MountMap
  clock: NetworkClock
  /** The simulated network's clock, whichever network the link names now. */
  simnetClock: NetworkClock
  /** The network shown and dated by: the gateway's own word (gateway-network.ts), the saved setting only where it gives none. */
  network(): NetworkName
  /** The link as saved, over the environment's defaults. */
  effective(): EffectiveLink
  /** The network to show, waiting for the gateway's first word when it has not given one yet. */
  answeredNetwork(): Promise<NetworkName>
  close(): void
}

interface Built {
  version: number
  link: EffectiveLink
  gateway: GatewayClient
  pathMap: PathMap
  mounts: MountMap
}

/** `simnetClock`: the embedded simulated network's clock, used when the link names `simnet`. */
export function createLiveLink(
  settings: SettingsStore,
  simnetClock: NetworkClock,
  reported: ReportedNetwork = createReportedNetwork(),
): LiveLink {
  const build = (): Built => {
    const link = settings.effective()
    return {
      version: settings.version,
      link,
      gateway: createGatewayClient({ url: link.url, user: link.user, password: link.password, timeoutMs: link.timeoutMs }),
      pathMap: createPathMap(link.pathMap),
      mounts: createMountMap(link.mounts),
    }
  }
  let built = build()
  const current = (): Built => {
    if (built.version === settings.version) return built
    const old = built
    built = build()
    // Requests already on their way finish on the old pool; close it once they can have.
    setTimeout(() => old.gateway.close(), old.link.timeoutMs + 1000).unref()
    return built
  }

  const gateway: GatewayClient = {
    get url() {
      return current().gateway.url
    },
    get timeoutMs() {
      return current().gateway.timeoutMs
    },
    get authorization() {
      return current().gateway.authorization
    },
    get agent() {
      return current().gateway.agent
    },
    fileInfo: (gatewayPath) => current().gateway.fileInfo(gatewayPath),
    folderStates: (gatewayPath, etag) => current().gateway.folderStates(gatewayPath, etag),
    ensureFolder: (gatewayPath) => current().gateway.ensureFolder(gatewayPath),
    close: () => current().gateway.close(),
  }
  const pathMap: PathMap = {
    rootOf: (userId) => current().pathMap.rootOf(userId),
    toGateway: (userId, userPath) => current().pathMap.toGateway(userId, userPath),
    toUser: (userId, gatewayPath) => current().pathMap.toUser(userId, gatewayPath),
  }
  const mounts: MountMap = {
    get mounts() {
      return current().mounts.mounts
    },
    toGateway: (userId, userPath) => current().mounts.toGateway(userId, userPath),
    pointsIn: (userPath) => current().mounts.pointsIn(userPath),
  }
  const network = () => reported.of(current().link)
  const currentClock = () => clockOf(network(), simnetClock)
  const clock: NetworkClock = {
    get name() {
      return currentClock().name
    },
    get genesis() {
      return currentClock().genesis
    },
    get epochSeconds() {
      return currentClock().epochSeconds
    },
  }
  // Asked at once, so that the first page already shows the gateway's word.
  void reported.refresh(built.link)
  return {
    gateway,
    pathMap,
    mounts,
    clock,
    simnetClock,
    network,
    effective: () => current().link,
    answeredNetwork: async () => {
      const link = current().link
      return reported.reported(link) ?? (await reported.refresh(link)) ?? link.network
    },
    close: () => built.gateway.close(),
  }
}

/**
 * The clock of the network a link names: a real network's constants, or the
 * local network's clock this stack was started with (`simnetClock`: the
 * simulated network's, or on NETWORK=devnet the one read from its node).
 */
export function clockOf(network: NetworkClock['name'], simnetClock: NetworkClock): NetworkClock {
  return network === 'simnet' || network === 'devnet' ? simnetClock : networkClock(network)
}

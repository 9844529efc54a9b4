import type { BridgeConfig } from '../shared/config.ts'
import { migrate, type Db } from '../shared/db.ts'
import type { NetworkName } from '../shared/epochs.ts'
import type { MountSetting } from './mount-map.ts'

/**
 * The gateway link as an admin sets it (plugin-ui/README.md, "Admin settings").
 * `gatewayUrl` '' means "the gateway from the bridge's own configuration"
 * (the embedded one by default); `gatewayPassword` undefined means "none saved".
 */
export interface GatewayLinkSettings {
  gatewayUrl: string
  gatewayUser: string
  gatewayPassword?: string
  pathMap: string
  network: NetworkName
  ipfsGateway: string
  /** Nextcloud External Storage mounts of the gateway (FILESYNC=nextcloud); ignored by the embedded files area. */
  mounts: MountSetting[]
}

/** What the bridge actually uses: saved settings over the environment's defaults. */
export interface EffectiveLink {
  url: string
  user?: string
  password?: string
  pathMap: string
  network: NetworkName
  ipfsGateway: string
  mounts: MountSetting[]
  timeoutMs: number
}

/** What may be shown to an admin: the password only as "set or not". */
export interface PublicLinkSettings extends Omit<GatewayLinkSettings, 'gatewayPassword'> {
  gatewayPasswordSet: boolean
}

export interface SettingsStore {
  /** The saved settings, or the defaults taken from the configuration when nothing was saved. */
  get(): GatewayLinkSettings
  /** Saves and notifies listeners; the next request uses the new link. */
  save(settings: GatewayLinkSettings): void
  effective(settings?: GatewayLinkSettings): EffectiveLink
  /** Counts saves: readers rebuild what they derived when it changes. */
  readonly version: number
}

const SCHEMA = [
  `CREATE TABLE gateway_link (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     settings TEXT NOT NULL,
     updated_ms INTEGER NOT NULL
   );`,
]

export function toPublicSettings(s: GatewayLinkSettings, effective: EffectiveLink): PublicLinkSettings {
  return {
    gatewayUrl: s.gatewayUrl,
    gatewayUser: s.gatewayUser,
    gatewayPasswordSet: effective.password !== undefined && effective.password !== '',
    pathMap: s.pathMap,
    network: s.network,
    ipfsGateway: s.ipfsGateway,
    mounts: s.mounts.map((m) => ({ ...m })),
  }
}

/**
 * Gateway link settings in the bridge's SQLite (one row, JSON). The
 * environment's values (GATEWAY_URL, PATH_MAP, ...) are the defaults until
 * an admin saves; from then on the saved row wins, across restarts too.
 */
export function createSettingsStore(db: Db, config: BridgeConfig): SettingsStore {
  migrate(db, 'bridge.settings', SCHEMA)
  const read = db.prepare('SELECT settings FROM gateway_link WHERE id = 1')
  const write = db.prepare('INSERT INTO gateway_link (id, settings, updated_ms) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET settings = excluded.settings, updated_ms = excluded.updated_ms')
  const defaults: GatewayLinkSettings = {
    gatewayUrl: '',
    gatewayUser: config.gatewayUser ?? '',
    pathMap: config.pathMap,
    network: config.network,
    ipfsGateway: config.ipfsGateway,
    mounts: [],
  }
  const load = (): GatewayLinkSettings => {
    const row = read.get() as { settings: string } | undefined
    return row ? { ...defaults, ...(JSON.parse(row.settings) as Partial<GatewayLinkSettings>) } : { ...defaults }
  }
  let current = load()
  let version = 0

  return {
    get: () => ({ ...current }),
    save(settings) {
      write.run(JSON.stringify(settings), Date.now())
      current = { ...settings }
      version++
    },
    effective(s = current) {
      const useDefaultGateway = s.gatewayUrl === ''
      // The configured service account is only ever sent to the configured gateway,
      // never to an address typed in the admin page.
      const user = s.gatewayUser || (useDefaultGateway ? config.gatewayUser : undefined)
      const password = s.gatewayPassword ?? (useDefaultGateway && user === config.gatewayUser ? config.gatewayPassword : undefined)
      return {
        url: useDefaultGateway ? config.gatewayUrl ?? '' : s.gatewayUrl,
        user: user || undefined,
        password: password || undefined,
        pathMap: s.pathMap,
        network: s.network,
        ipfsGateway: s.ipfsGateway,
        mounts: s.mounts,
        timeoutMs: config.gatewayTimeoutMs,
      }
    },
    get version() {
      return version
    },
  }
}

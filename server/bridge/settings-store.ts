import type { BridgeConfig } from '../shared/config.ts'
import { migrateSql, type Sql } from '../shared/sql/index.ts'
import type { PublicLinkSettings } from '../shared/contracts/admin-settings.ts'
import type { NetworkName } from '../shared/contracts/network.ts'
import type { Logger } from '../shared/logger.ts'
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
export type { PublicLinkSettings }

export interface SettingsStore {
  /** The saved settings as last read (from memory), or the defaults taken from the configuration when nothing was saved. */
  get(): GatewayLinkSettings
  /** Saves, in force here from the next request; on the other replicas once they refresh. */
  save(settings: GatewayLinkSettings): Promise<void>
  /** Reads the saved revision and reloads when another replica (or this one) saved since; a timer calls it on PostgreSQL. */
  refresh(): Promise<void>
  effective(settings?: GatewayLinkSettings): EffectiveLink
  /** The saved revision in use: readers rebuild what they derived when it changes. */
  readonly version: number
  /** Stops the refresh timer. */
  close(): void
}

export interface SettingsStoreOptions {
  /**
   * How often a store on PostgreSQL, where replicas share the settings, reads
   * whether another one saved (default SETTINGS_REFRESH_MS). SQLite has one
   * process, whose own saves apply at once: it never reads again.
   */
  refreshMs?: number
  /** Told once when the settings cannot be read, and when they can again. */
  logger?: Logger
}

/**
 * How stale a replica's settings may be after an admin saved on another. Requests read
 * them from memory, so this costs one small query per interval rather than one per request.
 */
export const SETTINGS_REFRESH_MS = 3_000

const SCHEMA = [
  `CREATE TABLE gateway_link (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     settings TEXT NOT NULL,
     updated_ms INTEGER NOT NULL
   );`,
  // Counts saves, so that every replica notices one with a cheap read.
  `ALTER TABLE gateway_link ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;`,
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
 * Gateway link settings in the bridge's store (one row, JSON). The
 * environment's values (GATEWAY_URL, PATH_MAP, ...) are the defaults until
 * an admin saves; from then on the saved row wins, across restarts and, on
 * PostgreSQL, on every bridge replica within `options.refreshMs`. Requests
 * read the settings from memory, never from the store.
 */
export async function createSettingsStore(sql: Sql, config: BridgeConfig, options: SettingsStoreOptions = {}): Promise<SettingsStore> {
  await migrateSql(sql, 'bridge.settings', SCHEMA)
  const defaults: GatewayLinkSettings = {
    gatewayUrl: '',
    gatewayUser: config.gatewayUser ?? '',
    pathMap: config.pathMap,
    network: config.network,
    ipfsGateway: config.ipfsGateway,
    mounts: [],
  }
  // Revision 0: nothing saved, the defaults.
  let current = { ...defaults }
  let version = 0
  // Revisions only grow: a read that lost a race with a save never rolls it back.
  const apply = (row: { settings: string; revision: number } | undefined) => {
    if (!row || row.revision <= version) return
    current = { ...defaults, ...(JSON.parse(row.settings) as Partial<GatewayLinkSettings>) }
    version = row.revision
  }
  const refresh = async () => apply(await sql.get('SELECT settings, revision FROM gateway_link WHERE id = 1'))
  await refresh()
  const stopRefreshing =
    sql.dialect === 'postgres' ? refreshEvery(options.refreshMs ?? SETTINGS_REFRESH_MS, refresh, options.logger) : () => {}

  return {
    get: () => ({ ...current }),
    async save(settings) {
      const settingsJson = JSON.stringify(settings)
      const { revision } = (await sql.get<{ revision: number }>(
        `INSERT INTO gateway_link (id, settings, updated_ms) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET settings = excluded.settings, updated_ms = excluded.updated_ms, revision = gateway_link.revision + 1
         RETURNING revision`,
        [settingsJson, Date.now()],
      ))!
      apply({ settings: settingsJson, revision })
    },
    refresh,
    effective(s = current) {
      const useDefaultGateway = s.gatewayUrl === ''
      // The configured service account is only ever sent to the configured gateway,
      // never to an address typed in the admin page.
      const user = s.gatewayUser || (useDefaultGateway ? config.gatewayUser : undefined)
      const password = s.gatewayPassword ?? (useDefaultGateway && user === config.gatewayUser ? config.gatewayPassword : undefined)
      return {
        url: useDefaultGateway ? (config.gatewayUrl ?? '') : s.gatewayUrl,
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
    close: stopRefreshing,
  }
}

/** Calls `refresh` every `ms`, one call at a time; while it fails, requests go on with the settings in use. */
function refreshEvery(ms: number, refresh: () => Promise<void>, logger?: Logger): () => void {
  let running = false
  let failing = false
  let stopped = false
  const timer = setInterval(() => {
    if (running) return
    running = true
    refresh()
      .then(
        () => {
          if (failing) logger?.info('Settings store readable again')
          failing = false
        },
        (err: unknown) => {
          if (!failing && !stopped) logger?.warn({ err }, 'Cannot read the saved settings; going on with those in use')
          failing = true
        },
      )
      .finally(() => {
        running = false
      })
  }, ms)
  timer.unref()
  return () => {
    stopped = true
    clearInterval(timer)
  }
}

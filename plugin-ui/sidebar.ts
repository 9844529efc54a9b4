/**
 * Registers the tab with whichever Files sidebar the page has, and nothing
 * else: Nextcloud 29–32 expose `OCA.Files.Sidebar`, Nextcloud 33 removed it
 * in favour of `registerSidebarTab` from `@nextcloud/files` 4 with a web
 * component. Without either (e.g. a page without the Files app) it registers
 * nothing.
 */
import type { ISidebarTab } from '@nextcloud/files'

import { storageSvg } from './icons.ts'
import { translate } from './utils/entry-l10n.ts'
import { toFileTarget } from './utils/file-target.ts'

/**
 * Everything but the registration loads when the tab is first shown: this
 * module is part of the script every Files page runs (Vue, the view and the
 * logger are not).
 */
const loadHost = () => import('./tab-host.ts')
const logError = (message: string, err: unknown) => void import('./logger.ts').then(({ logger }) => logger.error(message, { err }))

/** A TabHost that loads itself (and Vue) on first mount; until then it keeps what it was told. */
class LazyTabHost {
  #loading: Promise<TabHostInstance> | undefined
  #host: TabHostInstance | undefined
  #active = true
  #destroyed = false
  #info: unknown

  async mount(el: Element, fileInfo?: unknown): Promise<void> {
    this.#destroyed = false
    this.#info = fileInfo
    this.#loading ??= loadHost().then(({ TabHost }) => {
      this.#host = new TabHost()
      this.#host.setActive(this.#active)
      return this.#host
    })
    const host = await this.#loading
    // destroy() ran while the chunk was loading: nothing to show.
    if (!this.#destroyed) await host.mount(el, this.#info)
  }

  update(fileInfo: unknown): void {
    // Before the view has loaded, the latest file is what mount() will show.
    this.#info = fileInfo
    this.#host?.update(fileInfo)
  }

  setActive(active: boolean): void {
    this.#active = active
    this.#host?.setActive(active)
  }

  destroy(): void {
    this.#destroyed = true
    this.#host?.destroy()
  }
}

type TabHostInstance = InstanceType<Awaited<ReturnType<typeof loadHost>>['TabHost']>

export const TAB_ID = 'gateway'
/** Nextcloud 33 wants the tag to start with the app id. */
export const TAB_TAG_NAME = 'gateway-sidebar-tab'

/** The parts of Nextcloud 29–32's `OCA.Files.Sidebar` used here. */
export interface LegacySidebarTabOptions {
  id: string
  name: string
  iconSvg: string
  mount: (el: HTMLElement, fileInfo: unknown, context?: unknown) => Promise<void>
  update: (fileInfo: unknown) => void
  destroy: () => void
  enabled?: (fileInfo: unknown) => boolean
}

export interface LegacySidebar {
  registerTab(tab: unknown): void
  Tab: new (options: LegacySidebarTabOptions) => unknown
  /** Which tab `open` shows; a path relative to the user's files. */
  setActiveTab?(id: string): void
  open?(path: string): Promise<void> | void
}

export type SidebarHost =
  { kind: 'legacy'; sidebar: LegacySidebar } | { kind: 'files4'; registerSidebarTab: (tab: ISidebarTab) => void | Promise<void> }

interface HostWindow {
  OC?: { config?: { version?: string } }
  OCA?: { Files?: { Sidebar?: Partial<LegacySidebar>; _sidebar?: unknown } }
}

function serverMajorVersion(win: HostWindow): number | undefined {
  const major = Number.parseInt(win.OC?.config?.version ?? '', 10)
  return Number.isFinite(major) ? major : undefined
}

/** Nextcloud 33+, whose Files app reads @nextcloud/files 4's registries: known by its version or its sidebar entry point. */
export function runsFiles4(win: HostWindow): boolean {
  const major = serverMajorVersion(win)
  return (major !== undefined && major >= 33) || typeof win.OCA?.Files?._sidebar === 'function'
}

/**
 * Which sidebar API this page offers. Nextcloud 33+ is recognised by its
 * version or its sidebar entry point; older servers by `OCA.Files.Sidebar`.
 */
export function detectSidebarHost(win: HostWindow, registerSidebarTab?: (tab: ISidebarTab) => void | Promise<void>): SidebarHost | null {
  if (runsFiles4(win) && typeof registerSidebarTab === 'function') {
    return { kind: 'files4', registerSidebarTab }
  }
  const legacy = win.OCA?.Files?.Sidebar
  if (legacy && typeof legacy.registerTab === 'function' && typeof legacy.Tab === 'function') {
    return { kind: 'legacy', sidebar: legacy as LegacySidebar }
  }
  return null
}

const isShowable = (info: unknown) => toFileTarget(info) !== null

function registerLegacy(sidebar: LegacySidebar): void {
  const host = new LazyTabHost()
  sidebar.registerTab(
    new sidebar.Tab({
      id: TAB_ID,
      name: translate('Filecoin'),
      iconSvg: storageSvg,
      mount: (el, fileInfo) => host.mount(el, fileInfo),
      update: (fileInfo) => host.update(fileInfo),
      destroy: () => host.destroy(),
      enabled: isShowable,
    }),
  )
}

/**
 * The Nextcloud 33 tab: a light-DOM custom element whose `node` and `active`
 * properties the Files app sets; it hosts the same Vue view.
 * Defined lazily so that merely importing this module needs no DOM.
 */
export function defineTabElement(registry: CustomElementRegistry = window.customElements): void {
  if (registry.get(TAB_TAG_NAME)) return
  class GatewaySidebarTabElement extends HTMLElement {
    #host = new LazyTabHost()
    #node: unknown = undefined
    #active = true

    get node(): unknown {
      return this.#node
    }
    set node(node: unknown) {
      this.#node = node
      this.#host.update(node)
    }

    get active(): boolean {
      return this.#active
    }
    set active(active: boolean) {
      this.#active = Boolean(active)
      this.#host.setActive(this.#active)
    }

    connectedCallback() {
      this.#host.setActive(this.#active)
      this.#host.mount(this, this.#node).catch((err) => logError('Could not show the Filecoin tab', err))
    }

    disconnectedCallback() {
      this.#host.destroy()
    }
  }
  registry.define(TAB_TAG_NAME, GatewaySidebarTabElement)
}

function registerFiles4(registerSidebarTab: (tab: ISidebarTab) => void | Promise<void>): void {
  const registered = registerSidebarTab({
    id: TAB_ID,
    order: 90,
    displayName: translate('Filecoin'),
    iconSvgInline: storageSvg,
    tagName: TAB_TAG_NAME,
    enabled: ({ node }) => isShowable(node),
    async onInit() {
      defineTabElement()
      await (await loadHost()).loadView()
    },
  })
  void Promise.resolve(registered).catch((err) => logError('Could not register the Filecoin tab', err))
}

/**
 * Opens the Files sidebar on the Filecoin tab for a node (a file action's
 * way in), as the Files app's own "Details" action does on each version.
 */
export async function openGatewayTab(
  host: SidebarHost | null,
  node: { path: string },
  openOnFiles4: (node: unknown, tabId: string) => Promise<void>,
): Promise<void> {
  if (host?.kind === 'legacy') {
    host.sidebar.setActiveTab?.(TAB_ID)
    await host.sidebar.open?.(node.path)
  } else if (host?.kind === 'files4') {
    await openOnFiles4(node, TAB_ID)
  }
}

/** Registers the tab on the detected host; returns which one, or null when there is none. */
export function registerGatewayTab(host: SidebarHost | null): SidebarHost['kind'] | null {
  // No Files sidebar on this page (e.g. a page without the Files app): nothing to register.
  if (!host) return null
  if (host.kind === 'legacy') registerLegacy(host.sidebar)
  else registerFiles4(host.registerSidebarTab)
  return host.kind
}

/**
 * Registers the tab with the Files sidebar of Nextcloud 33–35:
 * `registerSidebarTab` from `@nextcloud/files` 4 with a web component
 * (`OCA.Files.Sidebar` of 29–32 is gone since 33, and those releases are out
 * of the supported range). Checked against @nextcloud/files 4.x
 * (lib/ui/sidebar/SidebarTab.ts: id, order, displayName, iconSvgInline,
 * tagName matching /^[a-z][a-z0-9-_]+$/, enabled, onInit).
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

const isShowable = (info: unknown) => toFileTarget(info) !== null

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

/** Registers the Filecoin tab through @nextcloud/files 4's `registerSidebarTab` (passed in: it is a lazy chunk). */
export function registerGatewayTab(registerSidebarTab: (tab: ISidebarTab) => void | Promise<void>): void {
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
 * way in), as the Files app's own "Details" action does: @nextcloud/files 4's
 * `getSidebar().open(node, tabId)`.
 */
export async function openGatewayTab(node: unknown, openOnFiles4: (node: unknown, tabId: string) => Promise<void>): Promise<void> {
  await openOnFiles4(node, TAB_ID)
}

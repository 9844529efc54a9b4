/**
 * Owns one Vue app for the tab: lazy-loads the view on first mount, creates
 * the app on mount, forwards updates through the component's exposed API and
 * unmounts on destroy. Both host APIs (legacy sidebar, Nextcloud 33 web
 * component) drive the same host.
 */
import type { App, Component } from 'vue'

import { createApp } from 'vue'

/** What GatewayTab.vue exposes through its component ref. */
export interface GatewayTabApi {
  update(fileInfo: unknown): void
  setActive(active: boolean): void
}

let viewLoad: Promise<Component> | null = null

/** The view is a separate chunk so the script every Files page loads stays small. */
export function loadView(): Promise<Component> {
  viewLoad ??= import('./views/GatewayTab.vue').then((m) => m.default as Component)
  // A failed chunk load (e.g. network blip) may be retried on the next mount.
  viewLoad.catch(() => {
    viewLoad = null
  })
  return viewLoad
}

export class TabHost {
  #app: App<Element> | null = null
  #api: GatewayTabApi | null = null
  #generation = 0
  #pendingInfo: unknown
  #active = true

  /** Mounts (or re-mounts) the view into `el` and shows `fileInfo`. */
  async mount(el: Element, fileInfo?: unknown): Promise<void> {
    const generation = ++this.#generation
    this.#pendingInfo = fileInfo
    const view = await loadView()
    // destroy() or another mount() ran while the chunk was loading.
    if (generation !== this.#generation) return
    this.#unmount()
    const app = createApp(view)
    this.#app = app
    this.#api = app.mount(el) as unknown as GatewayTabApi
    this.#api.setActive(this.#active)
    if (this.#pendingInfo !== undefined) this.#api.update(this.#pendingInfo)
  }

  update(fileInfo: unknown): void {
    this.#pendingInfo = fileInfo
    this.#api?.update(fileInfo)
  }

  setActive(active: boolean): void {
    this.#active = active
    this.#api?.setActive(active)
  }

  destroy(): void {
    this.#generation++
    this.#unmount()
  }

  get mounted(): boolean {
    return this.#app !== null
  }

  #unmount() {
    this.#app?.unmount()
    this.#app = null
    this.#api = null
  }
}

// @vitest-environment happy-dom
import type { ISidebarTab } from '@nextcloud/files'
import type { LegacySidebarTabOptions } from '../../plugin-ui/sidebar.ts'

import { getSidebarTabs, registerSidebarTab } from '@nextcloud/files'
import { flushPromises } from '@vue/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { detectSidebarHost, registerGatewayTab, TAB_ID, TAB_TAG_NAME } from '../../plugin-ui/sidebar.ts'
import { fileRecord, legacyFile, ok, tabConfig } from './fixtures.ts'
import { CONFIG, http, METADATA } from './http-mock.ts'

vi.mock('@nextcloud/axios', () => import('./http-mock.ts').then((m) => m.axiosModule))

/** A stand-in of Nextcloud 29–32's OCA.Files.Sidebar: keeps what is registered. */
function fakeLegacySidebar() {
  const tabs: LegacySidebarTabOptions[] = []
  class Tab {
    constructor(readonly options: LegacySidebarTabOptions) {}
  }
  return {
    tabs,
    sidebar: {
      Tab,
      registerTab: vi.fn((tab: Tab) => {
        tabs.push(tab.options)
      }),
    },
  }
}

/** @nextcloud/files keeps registered tabs in a page-wide scope shared by every app; empty it between pages. */
function clearFilesTabs() {
  const scope = (window as unknown as { _nc_files_scope?: { v4_0?: { filesSidebarTabs?: Map<string, unknown> } } })._nc_files_scope
  scope?.v4_0?.filesSidebarTabs?.clear()
}

beforeEach(() => {
  ;(window as unknown as { _oc_webroot: string })._oc_webroot = ''
  http.reset()
  http.on('GET', CONFIG, tabConfig('simnet'))
  http.on('POST', METADATA, ok(fileRecord({ state: 'Staging' })))
})

afterEach(() => {
  document.body.innerHTML = ''
  vi.useRealTimers()
  http.assertNoUnexpected()
})

describe('registration on Nextcloud 29–32 (OCA.Files.Sidebar)', () => {
  it('registers one tab with id, name, icon and callbacks', () => {
    const { sidebar, tabs } = fakeLegacySidebar()
    const register = vi.fn()
    const host = detectSidebarHost({ OC: { config: { version: '31.0.4.1' } }, OCA: { Files: { Sidebar: sidebar } } }, register)
    expect(registerGatewayTab(host)).toBe('legacy')
    expect(sidebar.registerTab).toHaveBeenCalledTimes(1)
    expect(register).not.toHaveBeenCalled()
    const [tab] = tabs
    expect(tab.id).toBe(TAB_ID)
    expect(tab.name).toBe('Filecoin')
    expect(tab.iconSvg).toMatch(/^<svg[\s\S]*<\/svg>$/)
    expect(tab.enabled?.(legacyFile())).toBe(true)
    expect(tab.enabled?.(undefined)).toBe(false)
  })

  it('mounts the lazy view, follows updates and unmounts on destroy', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const { sidebar, tabs } = fakeLegacySidebar()
    registerGatewayTab(detectSidebarHost({ OCA: { Files: { Sidebar: sidebar } } }))
    const [tab] = tabs
    const el = document.createElement('div')
    document.body.append(el)

    await tab.mount(el, legacyFile('/Documents', 'report.pdf'))
    await flushPromises()
    expect(el.querySelector('[data-test="state-label"]')?.textContent).toBe('Staging')

    tab.update(legacyFile('/Documents', 'other.pdf'))
    await flushPromises()
    expect(http.callsTo('POST', METADATA).map((c) => c.data)).toEqual([
      { filePath: '/Documents/report.pdf' },
      { filePath: '/Documents/other.pdf' },
    ])

    tab.destroy()
    expect(el.querySelector('[data-test="record"]')).toBeNull()
    // A destroyed tab polls no more.
    await vi.advanceTimersByTimeAsync(60_000)
    expect(http.callsTo('POST', METADATA)).toHaveLength(2)
  })

  it('does not mount if destroyed while the view was still loading', async () => {
    const { sidebar, tabs } = fakeLegacySidebar()
    registerGatewayTab(detectSidebarHost({ OCA: { Files: { Sidebar: sidebar } } }))
    const el = document.createElement('div')
    const mounting = tabs[0].mount(el, legacyFile())
    tabs[0].destroy()
    await mounting
    await flushPromises()
    expect(el.innerHTML).toBe('')
    expect(http.callsTo('POST', METADATA)).toHaveLength(0)
  })
})

describe('registration on Nextcloud 33+ (registerSidebarTab)', () => {
  it('registers a web component tab named after the app id, accepted by @nextcloud/files', async () => {
    // The fake forwards to the real registry so its validation (tag name, SVG) applies.
    const register = vi.fn((tab: ISidebarTab) => registerSidebarTab(tab))
    const { sidebar } = fakeLegacySidebar()
    const host = detectSidebarHost({ OC: { config: { version: '33.0.0.16' } }, OCA: { Files: { Sidebar: sidebar } } }, register)
    expect(registerGatewayTab(host)).toBe('files4')
    expect(sidebar.registerTab).not.toHaveBeenCalled()
    const tab = register.mock.calls[0][0]
    expect(tab.id).toBe(TAB_ID)
    expect(tab.tagName).toBe(TAB_TAG_NAME)
    expect(tab.tagName.startsWith('gateway')).toBe(true)
    expect(getSidebarTabs().map((t) => t.id)).toContain(TAB_ID)
    expect(tab.enabled?.({ node: { path: '/a.txt', basename: 'a.txt', type: 'file' } } as never)).toBe(true)

    await tab.onInit?.()
    expect(customElements.get(TAB_TAG_NAME)).toBeDefined()
  })

  it('the web component shows the node it is given and stops when removed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const register = vi.fn()
    registerGatewayTab(detectSidebarHost({ OCA: { Files: { _sidebar: () => ({}) } } }, register))
    await (register.mock.calls[0][0] as ISidebarTab).onInit?.()

    const el = document.createElement(TAB_TAG_NAME) as HTMLElement & { node: unknown; active: boolean }
    el.node = { path: '/Photos/cat.jpg', basename: 'cat.jpg', type: 'file' }
    el.active = true
    document.body.append(el)
    await flushPromises()
    await vi.advanceTimersByTimeAsync(0)
    expect(el.querySelector('[data-test="state-label"]')?.textContent).toBe('Staging')
    expect(http.callsTo('POST', METADATA)[0].data).toEqual({ filePath: '/Photos/cat.jpg' })

    // Hidden tab: no polling.
    el.active = false
    await vi.advanceTimersByTimeAsync(30_000)
    expect(http.callsTo('POST', METADATA)).toHaveLength(1)

    el.active = true
    await vi.advanceTimersByTimeAsync(0)
    expect(http.callsTo('POST', METADATA)).toHaveLength(2)

    el.remove()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(http.callsTo('POST', METADATA)).toHaveLength(2)
    expect(el.querySelector('[data-test="record"]')).toBeNull()
  })
})

describe('no sidebar host', () => {
  it('registers nothing when neither API exists', () => {
    const register = vi.fn()
    expect(detectSidebarHost({}, register)).toBeNull()
    expect(detectSidebarHost({ OC: { config: { version: '30.0.1' } }, OCA: {} }, register)).toBeNull()
    expect(registerGatewayTab(null)).toBeNull()
    expect(register).not.toHaveBeenCalled()
  })

  it('registers nothing on Nextcloud 33 without @nextcloud/files', () => {
    expect(detectSidebarHost({ OC: { config: { version: '33.0.0' } } })).toBeNull()
  })

  it('the init entry registers through OCA.Files.Sidebar when the page offers it', async () => {
    const { sidebar, tabs } = fakeLegacySidebar()
    ;(window as unknown as { OCA: unknown }).OCA = { Files: { Sidebar: sidebar } }
    vi.resetModules()
    await import('../../plugin-ui/init.ts')
    expect(tabs.map((t) => t.id)).toEqual([TAB_ID])
    delete (window as unknown as { OCA?: unknown }).OCA
  })

  it('the init entry registers nothing on a page without a Files sidebar', async () => {
    const win = window as unknown as { OCA?: unknown; OC?: unknown }
    delete win.OCA
    delete win.OC
    clearFilesTabs()
    vi.resetModules()
    await import('../../plugin-ui/init.ts')
    const files = await import('@nextcloud/files')
    expect(files.getSidebarTabs()).toEqual([])
  })

  it('the init entry registers through @nextcloud/files on Nextcloud 33', async () => {
    const win = window as unknown as { OCA?: unknown; OC?: unknown }
    delete win.OCA
    clearFilesTabs()
    win.OC = { config: { version: '33.0.1.2' } }
    vi.resetModules()
    await import('../../plugin-ui/init.ts')
    const files = await import('@nextcloud/files')
    expect(files.getSidebarTabs().map((t) => t.tagName)).toEqual([TAB_TAG_NAME])
    delete win.OC
  })
})

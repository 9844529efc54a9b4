// @vitest-environment happy-dom
import type { ISidebarTab } from '@nextcloud/files'

import { getSidebarTabs, registerSidebarTab } from '@nextcloud/files'
import { flushPromises } from '@vue/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { registerGatewayTab, TAB_ID, TAB_TAG_NAME } from '../../plugin-ui/sidebar.ts'
import { fileRecord, ok, tabConfig } from './fixtures.ts'
import { CONFIG, http, METADATA } from './http-mock.ts'

vi.mock('@nextcloud/axios', () => import('./http-mock.ts').then((m) => m.axiosModule))

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

describe('registration on Nextcloud 33–35 (registerSidebarTab)', () => {
  it('registers a web component tab named after the app id, accepted by @nextcloud/files', async () => {
    // The fake forwards to the real registry so its validation (tag name, SVG) applies.
    const register = vi.fn((tab: ISidebarTab) => registerSidebarTab(tab))
    registerGatewayTab(register)
    expect(register).toHaveBeenCalledTimes(1)
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
    registerGatewayTab(register)
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

describe('the init entry', () => {
  it('registers the tab and the four actions through @nextcloud/files, whatever version the page says', async () => {
    const win = window as unknown as { OCA?: unknown; OC?: unknown }
    delete win.OCA
    delete win.OC
    clearFilesTabs()
    vi.resetModules()
    await import('../../plugin-ui/init.ts')
    const files = await import('@nextcloud/files')
    await vi.waitFor(() => expect(files.getSidebarTabs().map((t) => t.tagName)).toEqual([TAB_TAG_NAME]))
    await vi.waitFor(() =>
      expect(files.getFileActions().map((a) => a.id)).toEqual(
        expect.arrayContaining(['gateway-state', 'gateway-copy-cid', 'gateway-why-not-stored', 'gateway-open-ipfs']),
      ),
    )
    // Nextcloud 29–32's registries are not filled: those releases are not supported.
    expect((window as unknown as { _nc_fileactions?: unknown })._nc_fileactions).toBeUndefined()
  })
})

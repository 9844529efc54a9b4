/**
 * A minimal stand-in of the Nextcloud page around the app's bundle, as
 * Nextcloud 33, 34 or 35 serve it (`?nc=33|34|35`, 35 by default): the
 * globals the bundle reads (OC, _oc_webroot), the Files app's registries of
 * @nextcloud/files 4 (`_nc_files_scope.v4_0`: file actions, sidebar tabs),
 * the sidebar opened through `OCA.Files._sidebar()`, and a file list over
 * WebDAV (PROPFIND) whose rows run the registered actions as the Files app
 * does: every callback given one context object, `renderInline` beside the
 * name, the rest in the row's menu. A tab is a custom element given `node`.
 *
 * What differs between the three, as far as an app can tell: OC.config.version,
 * and the globals Nextcloud 34 removed (developer manual, "Upgrade to
 * Nextcloud 34": jQuery/$, Backbone, OC.Notifications, OC.Dialogs.fileexists,
 * OC.Files.Client). On 33 they are here as deprecated stand-ins that record
 * each use in `window._previewRemovedGlobalsUsed`; on 34 and 35 they are
 * absent, so a script reaching for one fails there as it would on the real
 * release. Nextcloud 29–32's `OCA.Files.Sidebar` and `_nc_fileactions` are
 * not emulated: the app no longer supports those releases.
 */
const head = document.head.dataset
const userId = head.user || ''
const requestToken = head.requesttoken || ''
const webroot = ''
const requested = new URLSearchParams(location.search).get('nc')
const ncMajor = ['33', '34', '35'].includes(requested) ? Number(requested) : 35
const ncVersions = { 33: '33.0.4.1', 34: '34.0.2.1', 35: '35.0.0.3' }

window._oc_webroot = webroot
window.OC = Object.assign(window.OC || {}, {
  webroot,
  requestToken,
  config: { version: ncVersions[ncMajor], modRewriteWorking: false, loglevel: 2 },
  // Nextcloud's signature: app, type (folder inside the app), file.
  filePath: (app, type, file) => `${webroot}/apps/${app}/${type ? `${type}/` : ''}${file}`,
  getCurrentUser: () => ({ uid: userId, displayName: head.userDisplayname || userId }),
})
document.documentElement.dataset.nextcloud = String(ncMajor)

window._previewRemovedGlobalsUsed = []
if (ncMajor === 33) {
  // Deprecated on 33, removed on 34: each is a stand-in that only says it was used.
  const removedIn34 = (name) =>
    function () {
      window._previewRemovedGlobalsUsed.push(name)
      console.warn(`${name} is deprecated and removed in Nextcloud 34`)
    }
  window.jQuery = window.$ = removedIn34('jQuery')
  window.Backbone = { Model: removedIn34('Backbone.Model'), View: removedIn34('Backbone.View') }
  window.OC.Notifications = { show: removedIn34('OC.Notifications.show'), showTemporary: removedIn34('OC.Notifications.showTemporary') }
  window.OC.Dialogs = { fileexists: removedIn34('OC.Dialogs.fileexists') }
  window.OC.Files = { Client: removedIn34('OC.Files.Client') }
}

window.OCA = window.OCA || {}
window.OCA.Files = window.OCA.Files || {}
// The Files app owns the registry @nextcloud/files 4 announces registrations on, and redraws the list when an
// action comes (registrations may come after the first listing).
class FilesRegistry extends EventTarget {
  dispatchTypedEvent(_type, event) {
    return super.dispatchEvent(event)
  }
}
window._nc_files_scope ??= {}
window._nc_files_scope.v4_0 ??= {}
window._nc_files_scope.v4_0.registry ??= new FilesRegistry()
window._nc_files_scope.v4_0.registry.addEventListener('register:action', () => {
  if (shownEntries) renderRows(shownEntries)
})
// The sidebar store, as @nextcloud/files 4's getSidebar() reaches it (lib/ui/sidebar/Sidebar.ts).
window.OCA.Files._sidebar = () => ({
  get isOpen() {
    return currentInfo !== null
  },
  get activeTab() {
    return activeTabId
  },
  get node() {
    return currentInfo?.node
  },
  open: (node, tabId) => {
    if (tabId) activeTabId = tabId
    void openPath(node.path)
  },
  close: () => closeSidebar(),
  setActiveTab: (id) => {
    activeTabId = id
    void showTabs()
  },
  getTabs: () => files4Tabs(),
})

/** @nextcloud/files 4's registries, as far as they are filled. */
const files4Scope = () => window._nc_files_scope?.v4_0 ?? {}

/** The web-component tabs, driven through one mount/update/destroy. */
const files4Wrapped = new Map()
function files4Tabs() {
  for (const tab of files4Scope().filesSidebarTabs?.values() ?? []) {
    if (files4Wrapped.has(tab.id)) continue
    let element = null
    files4Wrapped.set(tab.id, {
      id: tab.id,
      name: tab.displayName,
      iconSvg: tab.iconSvgInline,
      enabled: (info) => tab.enabled({ node: info.node, folder: info.node, view: filesView }),
      async mount(el, info) {
        await tab.onInit?.()
        await customElements.whenDefined(tab.tagName)
        element = document.createElement(tab.tagName)
        element.node = info.node
        element.active = true
        el.replaceChildren(element)
      },
      update: (info) => {
        if (element) element.node = info.node
      },
      destroy: () => {
        element?.remove()
        element = null
      },
    })
  }
  return [...files4Wrapped.values()]
}
const allTabs = () => files4Tabs()

const themeSelect = document.getElementById('preview-theme')
if (themeSelect) {
  themeSelect.value = document.documentElement.dataset.theme || 'auto'
  themeSelect.addEventListener('change', () => {
    window.applyPreviewTheme(themeSelect.value)
    try {
      localStorage.setItem('gateway-preview-theme', themeSelect.value)
    } catch {
      // Not remembered; still applied.
    }
  })
}

// ---------------------------------------------------------------- sidebar

const sidebar = document.getElementById('app-sidebar')
const tabList = document.getElementById('preview-sidebar-tabs')
const panels = document.getElementById('preview-sidebar-panels')
const mounted = new Map()
let currentInfo = null
let activeTabId = null

function enabledTabs(info) {
  return allTabs().filter((tab) => typeof tab.enabled !== 'function' || tab.enabled(info))
}

function panelOf(tab) {
  let panel = document.getElementById(`tab-${tab.id}`)
  if (!panel) {
    panel = document.createElement('section')
    panel.id = `tab-${tab.id}`
    panel.className = 'preview-sidebar__panel'
    panel.setAttribute('role', 'tabpanel')
    panel.setAttribute('aria-labelledby', `tab-button-${tab.id}`)
    panels.append(panel)
  }
  return panel
}

function renderTabs() {
  if (!sidebar || !currentInfo) return
  const tabs = enabledTabs(currentInfo)
  if (!tabs.some((t) => t.id === activeTabId)) activeTabId = tabs[0]?.id ?? null
  tabList.replaceChildren(
    ...tabs.map((tab) => {
      const button = document.createElement('button')
      button.type = 'button'
      button.id = `tab-button-${tab.id}`
      button.className = 'preview-sidebar__tab'
      button.setAttribute('role', 'tab')
      button.setAttribute('aria-selected', String(tab.id === activeTabId))
      button.dataset.test = `tab-${tab.id}`
      // iconSvg is the app's own static SVG markup.
      button.innerHTML = `<span class="preview-sidebar__icon" aria-hidden="true">${tab.iconSvg || ''}</span>`
      button.append(document.createTextNode(tab.name))
      button.addEventListener('click', () => {
        activeTabId = tab.id
        void showTabs()
      })
      return button
    }),
  )
  void showTabs()
}

async function showTabs() {
  for (const tab of allTabs()) {
    const panel = panelOf(tab)
    const active = tab.id === activeTabId
    panel.hidden = !active
    if (!active) continue
    if (mounted.has(tab.id)) {
      tab.update(currentInfo)
    } else {
      mounted.set(tab.id, true)
      await tab.mount(panel, currentInfo, {})
    }
  }
}

function openSidebar(info) {
  currentInfo = info
  sidebar.hidden = false
  document.getElementById('preview-sidebar-title').textContent = info.name || 'All files'
  renderTabs()
}

function closeSidebar() {
  for (const tab of allTabs()) {
    if (mounted.has(tab.id)) tab.destroy()
  }
  mounted.clear()
  panels.replaceChildren()
  currentInfo = null
  sidebar.hidden = true
  for (const row of document.querySelectorAll('[aria-current="true"]')) row.removeAttribute('aria-current')
}

document.getElementById('preview-sidebar-close')?.addEventListener('click', closeSidebar)

// ---------------------------------------------------------------- files

const rows = document.getElementById('preview-files-rows')
const status = document.getElementById('preview-files-status')
const davBase = `${webroot}/remote.php/dav/files/${encodeURIComponent(userId)}`
const encodePath = (path) => path.split('/').map(encodeURIComponent).join('/')
const parentOf = (path) => path.slice(0, path.lastIndexOf('/')) || '/'
const baseName = (path) => path.slice(path.lastIndexOf('/') + 1)

function currentDir() {
  const dir = new URLSearchParams(location.search).get('dir') || '/'
  return dir.startsWith('/') ? dir.replace(/\/+$/, '') || '/' : '/'
}

/** What the sidebar keeps of the open entry: the node its tabs are given, and the name for its title. */
function fileInfo(path, isDir, extra = {}) {
  return { node: nodeOf({ path, isDir, ...extra }), name: path === '/' ? '' : baseName(path) }
}

const PROPFIND_BODY = `<?xml version="1.0"?>
<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
  <d:prop><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:getcontenttype/><oc:fileid/></d:prop>
</d:propfind>`

async function listFolder(dir) {
  const res = await fetch(`${davBase}${encodePath(dir === '/' ? '/' : `${dir}/`)}`, {
    method: 'PROPFIND',
    headers: { Depth: '1', 'Content-Type': 'application/xml; charset=utf-8', requesttoken: requestToken },
    body: PROPFIND_BODY,
    credentials: 'same-origin',
  })
  if (res.status === 404) throw new Error('This folder does not exist.')
  if (res.status !== 207) throw new Error(`Listing the folder failed (HTTP ${res.status}).`)
  const xml = new DOMParser().parseFromString(await res.text(), 'application/xml')
  const entries = []
  for (const response of xml.getElementsByTagNameNS('DAV:', 'response')) {
    const href = response.getElementsByTagNameNS('DAV:', 'href')[0]?.textContent ?? ''
    const path =
      decodeURIComponent(new URL(href, location.href).pathname).slice(decodeURIComponent(davBase).length).replace(/\/+$/, '') || '/'
    if (path === dir) continue
    const prop = (name) => response.getElementsByTagNameNS('DAV:', name)[0]?.textContent ?? ''
    const isDir = response.getElementsByTagNameNS('DAV:', 'collection').length > 0
    entries.push({
      path,
      isDir,
      size: Number(prop('getcontentlength')) || 0,
      mtime: prop('getlastmodified') ? Date.parse(prop('getlastmodified')) : undefined,
      mimetype: prop('getcontenttype'),
      fileId: response.getElementsByTagNameNS('http://owncloud.org/ns', 'fileid')[0]?.textContent || undefined,
    })
  }
  return entries.sort((a, b) => Number(b.isDir) - Number(a.isDir) || a.path.localeCompare(b.path))
}

function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}

function renderBreadcrumbs(dir) {
  const nav = document.getElementById('preview-breadcrumbs')
  const parts = dir.split('/').filter(Boolean)
  const crumbs = [['All files', '/'], ...parts.map((name, i) => [name, `/${parts.slice(0, i + 1).join('/')}`])]
  nav.replaceChildren(
    ...crumbs.map(([name, path], i) => {
      const link = document.createElement('a')
      link.href = `?dir=${encodeURIComponent(path)}`
      link.textContent = name
      if (i === crumbs.length - 1) link.setAttribute('aria-current', 'page')
      link.addEventListener('click', (event) => {
        event.preventDefault()
        navigate(path)
      })
      return link
    }),
  )
}

// Drawn here rather than emoji: headless and minimal systems often lack an emoji font.
const FOLDER_ICON =
  '<svg class="preview-files__icon preview-files__icon--folder" viewBox="0 0 24 24" aria-hidden="true"><path d="M10 4H4a2 2 0 0 0-2 2v12a2 2 0 0 0 2 2h16a2 2 0 0 0 2-2V8a2 2 0 0 0-2-2h-8l-2-2z"/></svg>'
const FILE_ICON =
  '<svg class="preview-files__icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8l-6-6zm-1 7V3.5L18.5 9H13z"/></svg>'

let shownEntries = null

function renderRows(entries) {
  shownEntries = entries
  rows.replaceChildren(
    ...entries.map((entry) => {
      const row = document.createElement('tr')
      row.dataset.test = 'file-row'
      row.dataset.path = entry.path
      const name = document.createElement('td')
      const button = document.createElement('button')
      button.type = 'button'
      button.className = 'preview-files__name'
      // Static SVG markup of this file; the name goes in as text.
      button.innerHTML = entry.isDir ? FOLDER_ICON : FILE_ICON
      // The name in its own box: a long one ends in an ellipsis, and its title gives it whole.
      const label = document.createElement('span')
      label.className = 'preview-files__label'
      label.dataset.test = 'file-name'
      label.textContent = label.title = baseName(entry.path)
      button.append(label)
      button.addEventListener('click', () => {
        if (entry.isDir) return navigate(entry.path)
        for (const r of rows.children) r.removeAttribute('aria-current')
        row.setAttribute('aria-current', 'true')
        openSidebar(fileInfo(entry.path, false, entry))
      })
      name.append(button)
      const actions = document.createElement('td')
      actions.className = 'preview-files__actions'
      renderActions(actions, entry)
      const size = document.createElement('td')
      size.textContent = entry.isDir ? '' : formatSize(entry.size)
      const modified = document.createElement('td')
      modified.textContent = entry.mtime ? new Date(entry.mtime).toLocaleString() : ''
      row.append(name, actions, size, modified)
      return row
    }),
  )
}

// ---------------------------------------------------------------- file actions

/**
 * Nextcloud's event bus as @nextcloud/event-bus finds it on the page. The Files app draws a node's row
 * again when told `files:node:updated`, asking its actions again (`enabled`, `renderInline`).
 */
function pageEventBus() {
  const handlers = new Map()
  return {
    getVersion: () => '3.3.3',
    subscribe: (name, handler) => handlers.set(name, [...(handlers.get(name) ?? []), handler]),
    unsubscribe: (name, handler) =>
      handlers.set(
        name,
        (handlers.get(name) ?? []).filter((h) => h !== handler),
      ),
    emit: (name, event) => {
      for (const handler of handlers.get(name) ?? []) {
        try {
          handler(event)
        } catch (err) {
          console.error('could not invoke event listener', err)
        }
      }
    },
  }
}
window._nc_event_bus ??= pageEventBus()
window._nc_event_bus.subscribe('files:node:updated', (node) => {
  const entry = shownEntries?.find((e) => e.path === node?.path)
  const cell = entry && [...rows.children].find((r) => r.dataset.path === entry.path)?.querySelector('.preview-files__actions')
  if (!cell) return
  if (openedMenu && cell.contains(openedMenu.toggle)) closeMenu()
  cell.replaceChildren()
  renderActions(cell, entry)
})

const filesView = { id: 'files', name: 'All files' }

/** A @nextcloud/files 4 Node, as far as actions and tabs read it. */
function nodeOf(entry) {
  return {
    path: entry.path,
    dirname: parentOf(entry.path),
    basename: baseName(entry.path),
    type: entry.isDir ? 'folder' : 'file',
    fileid: entry.fileId ? Number(entry.fileId) : undefined,
    root: `/files/${userId}`,
    mime: entry.isDir ? 'httpd/unix-directory' : entry.mimetype,
    attributes: {},
  }
}

/** How the Files app of Nextcloud 33–35 calls an action: with one context object (@nextcloud/files 4's ActionContext). */
function callsFor(node) {
  const folder = nodeOf({ path: parentOf(node.path), isDir: true })
  const context = { nodes: [node], view: filesView, folder, contents: [] }
  return {
    registered: () => [...(files4Scope().fileActions?.values() ?? [])],
    enabled: (a) => a.enabled(context),
    displayName: (a) => a.displayName(context),
    iconSvgInline: (a) => a.iconSvgInline(context),
    renderInline: (a) => a.renderInline(context),
    exec: (a) => a.exec(context),
  }
}

function enabledActions(calls) {
  return calls
    .registered()
    .filter((action) => {
      try {
        return typeof action.enabled !== 'function' || calls.enabled(action)
      } catch (err) {
        // As the Files app does: one broken action must not break the list.
        console.error('Error while checking action', action.id, err)
        return false
      }
    })
    .sort((a, b) => (a.order || 0) - (b.order || 0))
}

function renderActions(cell, entry) {
  const node = nodeOf(entry)
  const calls = callsFor(node)
  const enabled = enabledActions(calls)
  for (const action of enabled.filter((a) => typeof a.renderInline === 'function')) {
    const slot = document.createElement('span')
    slot.className = 'preview-files__inline'
    slot.dataset.action = action.id
    cell.append(slot)
    calls.renderInline(action).then(
      (el) => el && slot.replaceChildren(el),
      (err) => console.error('Error while rendering action', action.id, err),
    )
  }
  const menu = enabled.filter((a) => typeof a.renderInline !== 'function')
  if (menu.length === 0) return
  const toggle = document.createElement('button')
  toggle.type = 'button'
  toggle.className = 'preview-button preview-files__menu-toggle'
  toggle.setAttribute('aria-haspopup', 'menu')
  toggle.setAttribute('aria-expanded', 'false')
  toggle.setAttribute('aria-label', `Actions for ${node.basename}`)
  toggle.dataset.test = 'row-actions'
  toggle.textContent = '⋯'
  toggle.addEventListener('click', () => openMenu(toggle, calls, menu))
  cell.append(toggle)
}

let openedMenu = null

function closeMenu() {
  openedMenu?.list.remove()
  openedMenu?.toggle.setAttribute('aria-expanded', 'false')
  openedMenu = null
}

function openMenu(toggle, calls, actions) {
  const again = openedMenu?.toggle === toggle
  closeMenu()
  if (again) return
  const list = document.createElement('div')
  list.className = 'preview-menu'
  list.setAttribute('role', 'menu')
  list.dataset.test = 'row-menu'
  for (const action of actions) {
    const item = document.createElement('button')
    item.type = 'button'
    item.setAttribute('role', 'menuitem')
    item.className = 'preview-menu__item'
    item.dataset.action = action.id
    // iconSvgInline is the registering app's static SVG markup, as Nextcloud renders it.
    item.innerHTML = `<span class="preview-menu__icon" aria-hidden="true">${calls.iconSvgInline(action)}</span>`
    const name = calls.displayName(action)
    item.append(document.createTextNode(name))
    item.addEventListener('click', async () => {
      closeMenu()
      try {
        const done = await calls.exec(action)
        // As the Files app does: true is said as a success, false as a failure, null and undefined not at all.
        if (done === true) showToast(`"${name}" action executed successfully`)
        if (done === false) showToast(`"${name}" action failed`)
      } catch (err) {
        console.error('Error while running action', action.id, err)
        showToast(`"${name}" action failed`)
      }
    })
    list.append(item)
  }
  toggle.setAttribute('aria-expanded', 'true')
  toggle.after(list)
  // Nextcloud's menus stay inside the window: one that would run past its start edge is moved back in.
  const past = list.getBoundingClientRect().left
  if (past < 0) list.style.insetInlineEnd = `${parseFloat(getComputedStyle(list).insetInlineEnd) + past - 8}px`
  openedMenu = { toggle, list }
  list.querySelector('button')?.focus()
}

document.addEventListener('click', (event) => {
  if (openedMenu && !openedMenu.list.contains(event.target) && event.target !== openedMenu.toggle) closeMenu()
})
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && openedMenu) {
    const toggle = openedMenu.toggle
    closeMenu()
    toggle.focus()
  }
})

function showToast(message) {
  const toast = document.createElement('p')
  toast.className = 'preview-toast'
  toast.setAttribute('role', 'alert')
  toast.dataset.test = 'toast'
  toast.textContent = message
  document.body.append(toast)
  setTimeout(() => toast.remove(), 5000)
}

async function showFolder(dir) {
  renderBreadcrumbs(dir)
  status.textContent = 'Loading…'
  try {
    const entries = await listFolder(dir)
    renderRows(entries)
    status.textContent =
      entries.length === 0 ? 'This folder is empty. Upload files over WebDAV.' : `${entries.length} item${entries.length === 1 ? '' : 's'}`
  } catch (err) {
    rows.replaceChildren()
    status.textContent = err instanceof Error ? err.message : String(err)
  }
}

function navigate(dir) {
  history.pushState(null, '', dir === '/' ? location.pathname : `?dir=${encodeURIComponent(dir)}`)
  if (currentInfo) closeSidebar()
  void showFolder(dir)
}

/** Opens the sidebar for a path, as the Files app's sidebar store does. */
async function openPath(path) {
  const dir = parentOf(path)
  const entries = await listFolder(dir)
  const entry = entries.find((e) => e.path === path)
  if (!entry) throw new Error(`No such file: ${path}`)
  openSidebar(fileInfo(path, entry.isDir, entry))
}

if (rows && userId) {
  window.addEventListener('popstate', () => void showFolder(currentDir()))
  document.getElementById('preview-folder-details')?.addEventListener('click', () => {
    const dir = currentDir()
    openSidebar(fileInfo(dir, true))
  })
  // Once every script of the page ran (module scripts run before DOMContentLoaded), as the Files app starts
  // after the init scripts registered their actions.
  document.addEventListener('DOMContentLoaded', () => void showFolder(currentDir()), { once: true })
}

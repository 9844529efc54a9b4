/**
 * A minimal stand-in of the Nextcloud page around the app's bundle: the
 * globals the bundle reads (OC, OCA.Files.Sidebar of Nextcloud 29–32,
 * _oc_webroot) and, on the files page, a file list over WebDAV (PROPFIND)
 * with a sidebar that drives registered tabs the way the Files app does:
 * mount on first show, update on another file, destroy on close.
 */
const head = document.head.dataset
const userId = head.user || ''
const requestToken = head.requesttoken || ''
const webroot = ''

window._oc_webroot = webroot
window.OC = Object.assign(window.OC || {}, {
  webroot,
  requestToken,
  config: { version: '31.0.5.1', modRewriteWorking: false, loglevel: 2 },
  // Nextcloud's signature: app, type (folder inside the app), file.
  filePath: (app, type, file) => `${webroot}/apps/${app}/${type ? `${type}/` : ''}${file}`,
  getCurrentUser: () => ({ uid: userId, displayName: head.userDisplayname || userId }),
})

const registeredTabs = []
class Tab {
  constructor(options) {
    Object.assign(this, options)
  }
}
window.OCA = window.OCA || {}
window.OCA.Files = window.OCA.Files || {}
window.OCA.Files.Sidebar = {
  Tab,
  registerTab(tab) {
    if (!tab || !tab.id || typeof tab.mount !== 'function') throw new Error('Not a sidebar tab')
    registeredTabs.push(tab)
    renderTabs()
  },
  open: (path) => openPath(path),
  close: () => closeSidebar(),
}

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
  return registeredTabs.filter((tab) => typeof tab.enabled !== 'function' || tab.enabled(info))
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
  tabList.replaceChildren(...tabs.map((tab) => {
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
  }))
  void showTabs()
}

async function showTabs() {
  for (const tab of registeredTabs) {
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
  for (const tab of registeredTabs) {
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

/** Nextcloud 29–32's FileInfo as the legacy sidebar hands it to tabs. */
function fileInfo(path, isDir, extra = {}) {
  return {
    id: extra.fileId,
    name: path === '/' ? '' : baseName(path),
    path: path === '/' ? '/' : parentOf(path),
    type: isDir ? 'dir' : 'file',
    mimetype: isDir ? 'httpd/unix-directory' : extra.mimetype || 'application/octet-stream',
    size: extra.size,
    mtime: extra.mtime,
    isDirectory: () => isDir,
  }
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
    const path = decodeURIComponent(new URL(href, location.href).pathname).slice(decodeURIComponent(davBase).length).replace(/\/+$/, '') || '/'
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
  nav.replaceChildren(...crumbs.map(([name, path], i) => {
    const link = document.createElement('a')
    link.href = `?dir=${encodeURIComponent(path)}`
    link.textContent = name
    if (i === crumbs.length - 1) link.setAttribute('aria-current', 'page')
    link.addEventListener('click', (event) => {
      event.preventDefault()
      navigate(path)
    })
    return link
  }))
}

// Drawn here rather than emoji: headless and minimal systems often lack an emoji font.
const FOLDER_ICON = '<svg class="preview-files__icon preview-files__icon--folder" viewBox="0 0 24 24" aria-hidden="true"><path d="M10 4H4a2 2 0 0 0-2 2v12a2 2 0 0 0 2 2h16a2 2 0 0 0 2-2V8a2 2 0 0 0-2-2h-8l-2-2z"/></svg>'
const FILE_ICON = '<svg class="preview-files__icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8l-6-6zm-1 7V3.5L18.5 9H13z"/></svg>'

function renderRows(entries) {
  rows.replaceChildren(...entries.map((entry) => {
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
    const size = document.createElement('td')
    size.textContent = entry.isDir ? '' : formatSize(entry.size)
    const modified = document.createElement('td')
    modified.textContent = entry.mtime ? new Date(entry.mtime).toLocaleString() : ''
    row.append(name, size, modified)
    return row
  }))
}

async function showFolder(dir) {
  renderBreadcrumbs(dir)
  status.textContent = 'Loading…'
  try {
    const entries = await listFolder(dir)
    renderRows(entries)
    status.textContent = entries.length === 0 ? 'This folder is empty. Upload files over WebDAV.' : `${entries.length} item${entries.length === 1 ? '' : 's'}`
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

/** Opens the sidebar for a path (OCA.Files.Sidebar.open), as Nextcloud's does. */
async function openPath(path) {
  const dir = parentOf(path)
  const entries = await listFolder(dir)
  const entry = entries.find((e) => e.path === path)
  if (entry) openSidebar(fileInfo(path, entry.isDir, entry))
}

if (rows && userId) {
  window.addEventListener('popstate', () => void showFolder(currentDir()))
  document.getElementById('preview-folder-details')?.addEventListener('click', () => {
    const dir = currentDir()
    openSidebar(fileInfo(dir, true))
  })
  void showFolder(currentDir())
}

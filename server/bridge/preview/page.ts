/**
 * HTML of the preview page: the stand-in of a Nextcloud page that hosts the
 * app's built bundle. Plain server-rendered HTML; the little JS it needs is
 * in assets/host.js.
 */
import { speedInWords, type NetworkClock } from '../../shared/epochs.ts'
import { FIRST_PASSWORD } from '../admin-bootstrap.ts'
import type { User } from '../users.ts'

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Where the preview's own assets and the app's built bundle are served. */
export const PREVIEW_ASSETS = '/preview-assets'
export const APP_ASSETS = '/apps/gateway'

/** What the header says of the network the app is linked to: a simulated one always says so, and its pace. */
export function networkLabel(clock: NetworkClock): string {
  if (clock.name === 'simnet') return `Simulated network, ${speedInWords(clock) ?? 'in real time'}`
  if (clock.name === 'devnet') return 'Local devnet'
  return clock.name === 'mainnet' ? 'Filecoin mainnet' : 'Filecoin calibration network'
}

interface Shell {
  title: string
  body: string
  /** `networkLabel` of the linked network, shown in the header of logged-in pages. */
  network?: string
  user?: User
  requestToken?: string
  scripts?: string[]
}

function shell({ title, body, network, user, requestToken, scripts = [] }: Shell): string {
  // Nextcloud puts the request token and user on <head>; @nextcloud/auth reads them there.
  const headData =
    user && requestToken
      ? ` data-requesttoken="${escapeHtml(requestToken)}" data-user="${escapeHtml(user.id)}" data-user-displayname="${escapeHtml(user.displayName)}"`
      : ''
  return `<!DOCTYPE html>
<html lang="en">
<head${headData}>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)} – Filecoin gateway preview</title>
<link rel="stylesheet" href="${PREVIEW_ASSETS}/preview.css">
<script src="${PREVIEW_ASSETS}/theme.js"></script>
${scripts.map((src) => `<script type="module" src="${escapeHtml(src)}"></script>`).join('\n')}
</head>
<body>
<header class="preview-header">
  <span class="preview-header__title">Filecoin gateway <small>preview</small></span>
  ${network ? `<span class="preview-header__network" data-test="network" title="${escapeHtml(network)}">${escapeHtml(network)}</span>` : ''}
  ${user ? userMenu(user, requestToken ?? '') : ''}
</header>
${body}
</body>
</html>
`
}

function userMenu(user: User, requestToken: string): string {
  return `<nav class="preview-header__nav" aria-label="Account">
    <a href="/">Files</a>
    ${user.isAdmin ? '<a href="/settings/admin/gateway">Admin settings</a>' : ''}
    <label class="preview-theme"><span class="preview-theme__word">Theme</span>
      <select id="preview-theme" data-test="theme">
        <option value="auto">Auto</option><option value="light">Light</option><option value="dark">Dark</option>
      </select>
    </label>
    <span class="preview-header__user" data-test="user" title="${escapeHtml(user.displayName)}">${escapeHtml(user.displayName)}</span>
    <form method="post" action="/logout">
      <input type="hidden" name="requesttoken" value="${escapeHtml(requestToken)}">
      <button type="submit" class="preview-button">Log out</button>
    </form>
  </nav>`
}

export function loginPage(opts: { error?: string; user?: string; redirect?: string }): string {
  const error = opts.error ? `<p class="preview-error" role="alert" data-test="login-error">${escapeHtml(opts.error)}</p>` : ''
  return shell({
    title: 'Log in',
    body: `<main class="preview-login">
  <h1>Log in</h1>
  <p>The first user is <strong>admin</strong>; its password is ${escapeHtml(FIRST_PASSWORD)} (<code>./data/app/admin-password</code> by default). Add users with <code>npm run users</code>.</p>
  ${error}
  <form method="post" action="/login" class="preview-login__form">
    <label>User <input name="user" autocomplete="username" required value="${escapeHtml(opts.user ?? '')}" autofocus></label>
    <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
    ${opts.redirect ? `<input type="hidden" name="redirect_url" value="${escapeHtml(opts.redirect)}">` : ''}
    <button type="submit" class="preview-button preview-button--primary">Log in</button>
  </form>
</main>`,
  })
}

const missingBundle = `<p class="preview-error" role="alert" data-test="bundle-missing">
  The app's front end is not built: run <code>npm run build</code> and reload this page.
</p>`

export function filesPage(opts: { user: User; requestToken: string; bundleBuilt: boolean; network: string }): string {
  return shell({
    title: 'Files',
    network: opts.network,
    user: opts.user,
    requestToken: opts.requestToken,
    // The host first: it provides OC/OCA before the bundle registers its tab.
    scripts: opts.bundleBuilt ? [`${PREVIEW_ASSETS}/host.js`, `${APP_ASSETS}/js/gateway-init.mjs`] : [`${PREVIEW_ASSETS}/host.js`],
    body: `<div class="preview-app">
<main class="preview-files" aria-labelledby="preview-files-title">
  ${opts.bundleBuilt ? '' : missingBundle}
  <div class="preview-files__bar">
    <h1 id="preview-files-title">Files</h1>
    <nav id="preview-breadcrumbs" aria-label="Folder" data-test="breadcrumbs"></nav>
    <button type="button" class="preview-button" id="preview-folder-details" data-test="folder-details">Folder details</button>
  </div>
  <p id="preview-files-status" role="status" data-test="files-status">Loading…</p>
  <table class="preview-files__table" data-test="files">
    <thead><tr><th scope="col">Name</th><th scope="col" aria-label="Actions"></th><th scope="col">Size</th><th scope="col">Modified</th></tr></thead>
    <tbody id="preview-files-rows"></tbody>
  </table>
</main>
<aside id="app-sidebar" class="preview-sidebar" hidden aria-labelledby="preview-sidebar-title" data-test="sidebar">
  <div class="preview-sidebar__header">
    <h2 id="preview-sidebar-title" data-test="sidebar-title"></h2>
    <button type="button" class="preview-button" id="preview-sidebar-close" aria-label="Close sidebar">×</button>
  </div>
  <div class="preview-sidebar__tabs" role="tablist" id="preview-sidebar-tabs"></div>
  <div class="preview-sidebar__panels" id="preview-sidebar-panels"></div>
</aside>
</div>`,
  })
}

export function adminPage(opts: { user: User; requestToken: string; bundleBuilt: boolean; network: string }): string {
  return shell({
    title: 'Administration settings',
    network: opts.network,
    user: opts.user,
    requestToken: opts.requestToken,
    scripts: opts.bundleBuilt ? [`${PREVIEW_ASSETS}/host.js`, `${APP_ASSETS}/js/gateway-admin.mjs`] : [`${PREVIEW_ASSETS}/host.js`],
    body: `<main class="preview-admin">
  ${opts.bundleBuilt ? '' : missingBundle}
  <div id="gateway-admin-settings"></div>
</main>`,
  })
}

export function messagePage(title: string, message: string): string {
  return shell({
    title,
    body: `<main class="preview-login"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p><a href="/">Back</a></p></main>`,
  })
}

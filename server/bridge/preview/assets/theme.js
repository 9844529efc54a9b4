// Runs before the page paints: applies the saved theme choice (auto follows the system).
// data-theme is the choice, data-color-scheme what it resolves to: the stylesheet reads only
// the latter, so its dark palette is written once.
;(function () {
  var theme = 'auto'
  try {
    theme = localStorage.getItem('gateway-preview-theme') || 'auto'
  } catch {
    // Storage can be disabled; auto it is.
  }
  var root = document.documentElement
  var systemDark = window.matchMedia('(prefers-color-scheme: dark)')
  window.applyPreviewTheme = function (choice) {
    root.dataset.theme = choice
    root.dataset.colorScheme = choice === 'auto' ? (systemDark.matches ? 'dark' : 'light') : choice
  }
  systemDark.addEventListener('change', function () {
    window.applyPreviewTheme(root.dataset.theme || 'auto')
  })
  window.applyPreviewTheme(theme)
})()

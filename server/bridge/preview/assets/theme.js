// Runs before the page paints: applies the saved theme choice (auto follows the system).
;(function () {
  var theme = 'auto'
  try {
    theme = localStorage.getItem('gateway-preview-theme') || 'auto'
  } catch (e) {
    // Storage can be disabled; auto it is.
  }
  document.documentElement.dataset.theme = theme
})()

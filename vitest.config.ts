import vue from '@vitejs/plugin-vue'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Compiles .vue files for the component tests under test/plugin-ui (they pick
  // happy-dom with a `@vitest-environment` comment; every other test stays in node).
  plugins: [vue()],
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    server: {
      deps: {
        // @nextcloud/vue ships ESM that imports its own CSS; let Vite transform it.
        inline: [/@nextcloud\/vue/],
      },
    },
  },
})

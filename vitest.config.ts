import vue from '@vitejs/plugin-vue'
import { defineConfig } from 'vitest/config'
import LongestFirst from './test/sequencer.ts'

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
    // Two files at a time (vitest's default on two cores is one), the longest first: most of a file's time is
    // waiting on simulated chains and child processes, not CPU.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 2),
    sequence: { sequencer: LongestFirst },
    server: {
      deps: {
        // @nextcloud/vue ships ESM that imports its own CSS; let Vite transform it.
        inline: [/@nextcloud\/vue/],
      },
    },
  },
})

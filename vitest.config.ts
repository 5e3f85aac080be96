import { defineConfig } from 'vitest/config'

// One vitest run for the whole workspace. Each package's tests live in its `tests/` folder.
// Two cores: keep file parallelism modest so the PostgreSQL and child-process tests stay stable.
export default defineConfig({
  test: {
    include: ['packages/*/*/tests/**/*.test.ts', 'scripts/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', '**/fixtures/**'],
    setupFiles: ['./vitest.setup.ts'],
    // rebuilds the keel bundle when the sources changed (see the file)
    globalSetup: ['./vitest.global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ['default', 'json'],
    outputFile: { json: './node_modules/.cache/vitest/results.json' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})

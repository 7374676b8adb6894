import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Temp folders of the run go under one folder, removed at its end.
    globalSetup: ['test/global-setup.ts'],
    // K1: a state folder of its own for each test file.
    setupFiles: ['test/setup-state.ts'],
    // Child-process tests (crash, restart, shutdown) need real processes; forks keep them isolated.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A flaky test is a bug to fix, never to retry.
    retry: 0,
  },
});

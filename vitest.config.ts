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
    // Issue 56: most of a file's time is spent waiting on the processes it starts (servers,
    // gateways, peers), not on a core: four files at once on a 2-core machine. Vitest's default
    // (cores - 1) ran them one at a time there.
    maxWorkers: 4,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A flaky test is a bug to fix, never to retry.
    retry: 0,
  },
});

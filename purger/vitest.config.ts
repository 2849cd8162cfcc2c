import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration files each start their own redis-server and varnishd instances; two at a
    // time keeps a 2-core machine responsive while other suites run.
    maxWorkers: 2,
    fileParallelism: true,
  },
});

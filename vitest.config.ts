import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "build/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Prism and PostgreSQL-backed suites start processes; two workers match the two cores we have.
    maxWorkers: 2,
  },
});

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Prism and PostgreSQL-backed suites start processes; two workers match the two cores we have.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "suite",
          include: ["**/*.test.ts"],
          exclude: ["node_modules/**", "build/**", ".ci/**", "deploy/**"],
        },
      },
      // npm ci and the build in scratch copies (the production install, the Dockerfile): after the
      // rest rather than beside it, so their load does not slow the tests that wait on timers.
      { extends: true, test: { name: "deploy", include: ["deploy/**/*.test.ts"], sequence: { groupOrder: 1 } } },
    ],
  },
});

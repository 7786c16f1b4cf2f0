/** `npm run conformance`: exit codes, the table, and no process left behind. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TSX = fileURLToPath(new URL("../node_modules/.bin/tsx", import.meta.url));

function conformance(...args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, ["conformance/run.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, CONFORMANCE_SEED: "7" },
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

// Each case starts a process (and a server or Prism in it): slow on a loaded machine.
const TIMEOUT_MS = 90_000;

describe("npm run conformance", () => {
  it(
    "exits 1 and says why when the server breaks the contract",
    async () => {
      const { code, output } = await conformance(
        "--target",
        "server",
        "--only",
        "creators are sorted",
        "--fault",
        "undocumented-status",
        "--runs",
        "3",
      );
      expect(output).toContain("FAIL [server (with faults)] creators are sorted by name");
      expect(output).toContain("status 203 is not documented for listCreators");
      expect(output).toMatch(/listCreators\s+valid\s+\d+ cases\s+\d+ ms\s+FAIL/);
      expect(output).toContain("seed 7");
      expect(code).toBe(1);
    },
    TIMEOUT_MS,
  );

  it(
    "prints the table, exits 0 when the target conforms and stops the Prism mock it started",
    async () => {
      const { code, output } = await conformance("--target", "mock", "--only", "DELETE /webhooks");
      expect(output).toMatch(/DELETE \/webhooks of an unknown id answers 200 deleted: true\s+contract\s+pass/);
      expect(output).toContain("Conformance passed");
      expect(code).toBe(0);
      const url = /against mock \((http:\/\/127\.0\.0\.1:\d+\/api\/v1)\)/.exec(output)?.[1];
      expect(url).toBeDefined();
      await expect(fetch(`${url}/`)).rejects.toThrow();
    },
    TIMEOUT_MS,
  );

  it("exits 2 with the usage on a bad target", async () => {
    const { code, output } = await conformance("--target", "nowhere");
    expect(output).toContain("--target must be mock, server, both or an http(s) URL");
    expect(output).toContain("Usage: npm run conformance");
    expect(code).toBe(2);
  });
});

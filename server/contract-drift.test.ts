import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { loadContract } from "../contract/contract.ts";
import { periodStart, type Period } from "./domain/analytics.ts";
import { generateApiKey, parseApiKey } from "./domain/keys.ts";
import { MAX_DURATION_MINUTES } from "./domain/lifecycle.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const GENERATED = `${ROOT}generated/api.ts`;

/**
 * Type-checks `entry` and what it imports, with generated/api.ts replaced by `edit` of it (as if
 * openapi.yaml had changed and `npm run generate` had run), and returns tsc's messages.
 */
function typeErrorsWith(entry: string, edit: (generated: string) => string): string[] {
  const { options } = ts.parseJsonConfigFileContent(
    ts.readConfigFile(`${ROOT}tsconfig.json`, ts.sys.readFile).config,
    ts.sys,
    ROOT,
  );
  const host = ts.createCompilerHost(options);
  const original = readFileSync(GENERATED, "utf8");
  const edited = edit(original);
  expect(edited, "the edit changed nothing: the fixture no longer matches generated/api.ts").not.toBe(original);
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => (file === GENERATED ? edited : readFile(file));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, onError) =>
    file === GENERATED ? ts.createSourceFile(file, edited, language) : getSourceFile(file, language, onError);
  const program = ts.createProgram([`${ROOT}${entry}`], { ...options, noEmit: true }, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
}

/** The contract's union `name` in generated/api.ts, with `change` applied to its members. */
function editUnion(name: string, change: (members: string) => string): (generated: string) => string {
  return (generated) =>
    generated.replace(
      new RegExp(`(\\n\\s+${name}: )([^;]+);`),
      (_match, head: string, members: string) => `${head}${change(members)};`,
    );
}

/**
 * The server takes its error codes and value sets from generated/ (the contract), so a change to
 * openapi.yaml that the server does not follow fails `tsc` (npm run lint), not a partner.
 */
describe("the server follows the contract at compile time", () => {
  it("as it stands, the server's error catalogue and plans compile against the contract", () => {
    expect(typeErrorsWith("server/errors.ts", (generated) => `${generated}\n`)).toEqual([]);
  });

  it("fails tsc when the contract adds an error code the server's catalogue lacks", () => {
    const errors = typeErrorsWith(
      "server/errors.ts",
      editUnion("ErrorCode", (members) => `${members} | "payment_method_expired"`),
    );
    expect(errors.join("\n")).toMatch(/payment_method_expired/);
  });

  it("fails tsc when the contract drops an error code the server's catalogue still has", () => {
    const errors = typeErrorsWith(
      "server/errors.ts",
      editUnion("ErrorCode", (members) => members.replace(' | "vertical_mismatch"', "")),
    );
    expect(errors.join("\n")).toMatch(/vertical_mismatch/);
  });

  it("fails tsc when the contract adds a plan the server prices nowhere", () => {
    const errors = typeErrorsWith(
      "server/domain/plans.ts",
      editUnion("Plan", (members) => `${members} | "premium"`),
    );
    expect(errors.join("\n")).toMatch(/premium/);
  });
});

/**
 * The domain rules are plain synchronous functions, so the few contract values they use are
 * constants there rather than read from the loaded contract; these checks fail when the contract
 * and those constants part.
 */
describe("the domain's copies of contract values match the contract", async () => {
  const { limits } = await loadContract();

  it("a stream without a duration ends after the contract's longest duration", () => {
    expect(MAX_DURATION_MINUTES).toBe(limits.durationMinutes.max);
  });

  it("keys are made and recognised in the contract's key pattern", () => {
    for (const mode of ["live", "test"] as const) expect(generateApiKey(mode)).toMatch(limits.apiKeyPattern);
    for (const key of [
      `svc_live_${"a".repeat(32)}`,
      `svc_test_${"Z9".repeat(16)}`,
      `svc_prod_${"a".repeat(32)}`,
      `svc_test_${"a".repeat(31)}`,
      `svc_test_${"a".repeat(31)}-`,
    ]) {
      expect(parseApiKey(key) !== null, key).toBe(limits.apiKeyPattern.test(key));
    }
  });

  it("every period the contract offers has a length", () => {
    const now = new Date("2026-11-20T12:00:00.000Z");
    for (const period of limits.periods.values)
      expect(periodStart(period as Period, now).getTime()).toBeLessThan(now.getTime());
  });
});

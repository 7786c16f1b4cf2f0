import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const GENERATED = `${ROOT}generated/api.ts`;

/**
 * Type-checks `entry` and what it imports, with generated/api.ts replaced by `edit` of it (as if
 * openapi.yaml had changed and `npm run generate` had run), and returns tsc's messages.
 */
function typeErrorsWith(entry: string, edit: (generated: string) => string): string[] {
  const { options } = ts.parseJsonConfigFileContent(ts.readConfigFile(`${ROOT}tsconfig.json`, ts.sys.readFile).config, ts.sys, ROOT);
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
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
}

/** The contract's union `name` in generated/api.ts, with `change` applied to its members. */
function editUnion(name: string, change: (members: string) => string): (generated: string) => string {
  return (generated) => generated.replace(new RegExp(`(\\n\\s+${name}: )([^;]+);`), (_match, head: string, members: string) => `${head}${change(members)};`);
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
    const errors = typeErrorsWith("server/errors.ts", editUnion("ErrorCode", (members) => `${members} | "payment_method_expired"`));
    expect(errors.join("\n")).toMatch(/payment_method_expired/);
  });

  it("fails tsc when the contract drops an error code the server's catalogue still has", () => {
    const errors = typeErrorsWith("server/errors.ts", editUnion("ErrorCode", (members) => members.replace(' | "vertical_mismatch"', "")));
    expect(errors.join("\n")).toMatch(/vertical_mismatch/);
  });

  it("fails tsc when the contract adds a plan the server prices nowhere", () => {
    const errors = typeErrorsWith("server/domain/plans.ts", editUnion("Plan", (members) => `${members} | "premium"`));
    expect(errors.join("\n")).toMatch(/premium/);
  });
});

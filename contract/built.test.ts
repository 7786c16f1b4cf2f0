import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeStartupError } from "../server/startup-errors.ts";
import { builtContractText, ContractBuildError, loadBuiltContract } from "./built.ts";
import { loadContract } from "./contract.ts";
import { CONTRACT_FILE } from "./files.ts";

const fromSource = await loadContract();
const scratch = mkdtempSync(join(tmpdir(), "built-contract-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A build of openapi.yaml as `npm run build` writes it, beside a copy of the source it was made from. */
function build(name: string): { file: string; source: string } {
  const source = join(scratch, `${name}.yaml`);
  copyFileSync(CONTRACT_FILE, source);
  const file = join(scratch, `${name}.json`);
  writeFileSync(file, builtContractText(fromSource, readFileSync(source)));
  return { file, source };
}

describe("the contract the server reads (build/contract/server.json)", () => {
  it("is the contract as the tools read it from openapi.yaml: the same schemas, operations and limits, frozen", () => {
    const { file, source } = build("same");
    const built = loadBuiltContract(file, source);
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")))).toEqual(["source", "dereferenced"]);
    expect(built.dereferenced).toEqual(fromSource.dereferenced);
    expect(built.version).toBe(fromSource.version);
    expect(built.operations.all.map((operation) => operation.operationId)).toEqual(
      fromSource.operations.all.map((operation) => operation.operationId),
    );
    expect(built.limits).toEqual(fromSource.limits);
    expect(Object.isFrozen(built.dereferenced.components.schemas.StreamList.properties.limit)).toBe(true);
    expect(loadBuiltContract(file, source)).toBe(built);
  });

  it("refuses a missing build, naming the file and the fix, in the one line the server prints", () => {
    const missing = join(scratch, "missing.json");
    const error = (() => {
      try {
        loadBuiltContract(missing, CONTRACT_FILE);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ContractBuildError);
    expect(describeStartupError(error, undefined)).toBe(
      `${missing} is missing: the server reads the contract the build makes from openapi.yaml. Fix: run npm run build (npm ci runs it too).`,
    );
  });

  it("refuses a build made from another openapi.yaml than the one beside it: the server would answer to an old contract", () => {
    const { file, source } = build("stale");
    writeFileSync(source, `${readFileSync(source, "utf8")}# edited after the build\n`);
    expect(() => loadBuiltContract(file, source)).toThrow(
      `${file} was built from another ${source} than the one there now. Fix: run npm run build`,
    );
  });

  it("takes the build as it is where its source is not installed", () => {
    const { file } = build("no-source");
    expect(loadBuiltContract(file, join(scratch, "absent.yaml")).version).toBe(fromSource.version);
  });

  it("refuses a file that is not a built contract", () => {
    const broken = join(scratch, "broken.json");
    writeFileSync(broken, "{ not json");
    expect(() => loadBuiltContract(broken, CONTRACT_FILE)).toThrow(
      /broken\.json cannot be read \(.*\)\. Fix: run npm run build/,
    );
    const other = join(scratch, "other.json");
    writeFileSync(other, JSON.stringify({ openapi: "3.1.0" }));
    expect(() => loadBuiltContract(other, CONTRACT_FILE)).toThrow(
      /other\.json is not a built contract\. Fix: run npm run build/,
    );
  });
});

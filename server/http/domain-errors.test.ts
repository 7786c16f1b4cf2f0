import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { DomainError } from "../domain/errors.ts";
import { ERRORS } from "../errors.ts";
import { httpErrorOf } from "./domain-errors.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOMAIN_ERRORS = `${ROOT}server/domain/errors.ts`;

/** tsc's messages for http/domain-errors.ts, with domain/errors.ts replaced by `edit` of it. */
function typeErrorsWithDomainErrors(edit: (source: string) => string): string[] {
  const { options } = ts.parseJsonConfigFileContent(ts.readConfigFile(`${ROOT}tsconfig.json`, ts.sys.readFile).config, ts.sys, ROOT);
  const host = ts.createCompilerHost(options);
  const edited = edit(readFileSync(DOMAIN_ERRORS, "utf8"));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, onError) => (file === DOMAIN_ERRORS ? ts.createSourceFile(file, edited, language) : getSourceFile(file, language, onError));
  const program = ts.createProgram([`${ROOT}server/http/domain-errors.ts`], { ...options, noEmit: true }, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
}

describe("domain refusals on the wire", () => {
  it("answers a refusal without detail with its code's status and standard message", () => {
    const error = httpErrorOf(new DomainError("plan_minutes_used_up"));
    expect([error.status, error.code, error.message]).toEqual([402, "no_minutes", ERRORS.no_minutes.message]);
  });

  it("answers a refusal with detail with the domain's message", () => {
    const error = httpErrorOf(new DomainError("not_live", "Stream s is not live (status ended); only a live stream can be ended."));
    expect(error.toBody()).toEqual({ error: { code: "not_found", message: "Stream s is not live (status ended); only a live stream can be ended." } });
    expect(error.status).toBe(404);
  });

  it("fails tsc when the domain gains a reason the HTTP layer does not map", () => {
    // The new reason goes at the end of the union, wherever that is now.
    const withNewReason = (source: string) => {
      const edited = source.replace(/^( {2}\| "\w+");$/m, '$1\n  | "wallet_frozen";');
      expect(edited).not.toBe(source);
      return edited;
    };
    const errors = typeErrorsWithDomainErrors(withNewReason);
    expect(errors.join("\n")).toMatch(/wallet_frozen/);
  });
});

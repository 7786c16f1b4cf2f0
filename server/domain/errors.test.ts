import { describe, expect, it } from "vitest";
import { loadContract } from "../../contract/contract.ts";
import { ERRORS, type ErrorCode } from "./errors.ts";

/** The `| HTTP | code | … |` rows of a code schema's description: the statuses the contract's prose states. */
function statusTable(description: string): Map<string, number> {
  const rows = new Map<string, number>();
  for (const match of description.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)) rows.set(match[2]!, Number(match[1]));
  return rows;
}

/** Every error code a response of the contract can carry, with the response's status and where it is. */
function responseCodes(document: Record<string, any>): { status: number; code: string; at: string }[] {
  const found: { status: number; code: string; at: string }[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, operation] of Object.entries<Record<string, any>>(item)) {
      for (const [status, response] of Object.entries<Record<string, any>>(operation?.responses ?? {})) {
        const codes = response?.content?.["application/json"]?.schema?.properties?.error?.properties?.code?.enum;
        for (const code of codes ?? []) found.push({ status: Number(status), code, at: `${method} ${path} ${status}` });
      }
    }
  }
  return found;
}

describe("the one table of errors", async () => {
  const contract = await loadContract();
  const schemas = contract.dereferenced.components.schemas;

  it("states every code's status as the contract's tables do, and no code the contract lacks", () => {
    const stated = new Map([
      ...statusTable(schemas.ErrorCode.description),
      ...statusTable(schemas.DashboardErrorCode.description),
    ]);
    const table = Object.entries(ERRORS).map(([code, { status }]) => [code, status]);
    expect(table.sort()).toEqual([...stated.entries()].sort());
  });

  it("answers every code with the status of each response that documents it", () => {
    const codes = responseCodes(contract.dereferenced);
    expect(codes.length).toBeGreaterThan(100);
    const mismatched = codes.filter(({ status, code }) => ERRORS[code as ErrorCode]?.status !== status);
    expect(mismatched).toEqual([]);
  });
});

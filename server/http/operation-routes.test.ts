import { describe, expect, it } from "vitest";
import { loadBuiltContract } from "../../contract/built.ts";
import type { Contract } from "../../contract/contract.ts";
import type { AnyOperationHandler, OperationHandlers } from "./dispatch.ts";
import { operationRules } from "./operation-rules.ts";
import { operationRoutes } from "./operation-routes.ts";

const contract = loadBuiltContract();
const answer: AnyOperationHandler = (_req, res) => void res.end();

/** The contract as a build that lacks `operationId` would serve it. */
function without(operationId: string): Contract {
  const all = contract.operations.all.filter((operation) => operation.operationId !== operationId);
  return { ...contract, operations: { ...contract.operations, all } };
}

/** A handler for each operation of `served`, as the types would require of app.ts. */
function handlersOf(served: Contract): OperationHandlers {
  // The test stands in for the compiler, which checks app.ts's handlers against generated/api.ts.
  return Object.fromEntries(served.operations.all.map(({ operationId }) => [operationId, answer])) as OperationHandlers;
}

describe("the operations' routes, built once at start-up", () => {
  it("refuses to start with a handler for an operation the built contract does not serve", () => {
    expect(() => operationRoutes(without("listStreams"), { handlers: handlersOf(contract) })).toThrow(
      /a handler for listStreams, which the contract does not serve: .*npm run build/,
    );
  });

  it("refuses to start when an operation of the built contract has no handler", () => {
    expect(() => operationRoutes(contract, { handlers: handlersOf(without("getStream")) })).toThrow(
      /no handler for getStream: .*npm run generate/,
    );
  });

  it("refuses to start with a rule for an operation the built contract does not serve", () => {
    expect(() => operationRoutes(without("deleteWebhook"), { rules: operationRules(contract) })).toThrow(
      /a rule for deleteWebhook, which the contract does not serve/,
    );
  });

  it("gives a request its operation's rule and its path parameters, decoded", () => {
    const routes = operationRoutes(contract, { rules: operationRules(contract), handlers: handlersOf(contract) });
    const list = routes.find("GET", "/dashboard/api/v1/modes/live/streams");
    expect(list?.operation.operationId).toBe("dashboardListStreams");
    expect(list?.params).toEqual({ mode: "live" });
    expect(list?.rule.settleQuery?.({ limit: ["500", "2"], offset: "-3" })).toEqual({ limit: "100", offset: "0" });
    const one = routes.find("GET", "/api/v1/streams/a%20b");
    expect(one?.params).toEqual({ id: "a b" });
    expect(one?.rule).toEqual({});
    expect(one?.handler).toBe(answer);
  });
});

/**
 * Which documented errors a run has reached: every (public operation, status, code) that
 * openapi.yaml lists must have been answered at least once, or the contract promises an error
 * the suite never saw.
 */
import type { Exchange } from "./client.ts";
import type { Contract } from "./contract.ts";

/** `createStream 429 concurrency_limit` */
export type ErrorCase = string;

export function documentedErrors(contract: Contract): ErrorCase[] {
  return contract.publicOperations.flatMap((op) =>
    [...op.responses.values()].flatMap((response) =>
      response.codes.map((code) => `${op.operationId} ${response.status} ${code}`),
    ),
  );
}

/** Only conformant answers count: an error the contract does not document reaches nothing. */
export function reachedErrors(exchanges: Iterable<Exchange>): Set<ErrorCase> {
  const reached = new Set<ErrorCase>();
  for (const exchange of exchanges) {
    const code = exchange.body?.error?.code;
    if (exchange.operationId && typeof code === "string" && exchange.violations.length === 0)
      reached.add(`${exchange.operationId} ${exchange.status} ${code}`);
  }
  return reached;
}

export function unreachedErrors(contract: Contract, exchanges: Iterable<Exchange>): ErrorCase[] {
  const reached = reachedErrors(exchanges);
  return documentedErrors(contract).filter((errorCase) => !reached.has(errorCase));
}

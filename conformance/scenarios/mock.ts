/**
 * Prism keeps no state, so on the mock every documented error is reached by asking for it:
 * `Prefer: code=<status>, example=<code>` (each error response has one example per code).
 */
import { expectError } from "../check.ts";
import type { Scenario } from "../scenario.ts";
import { callSample } from "./common.ts";

export const mockScenarios: Scenario[] = [
  {
    name: "the mock answers every documented error code when asked",
    tag: "contract",
    only: ["mock"],
    async run(ctx) {
      for (const op of ctx.contract.publicOperations) {
        for (const response of op.responses.values()) {
          for (const code of response.codes) {
            const answer = await callSample(ctx, op, {
              headers: { prefer: `code=${response.status}, example=${code}` },
            });
            expectError(answer, response.status, code);
          }
        }
      }
    },
  },
];

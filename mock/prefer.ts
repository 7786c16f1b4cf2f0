/**
 * The mock's `Prefer` header: `code=<status>` and `example=<name>`, as Prism reads them. A code
 * the operation does not document, or an example its response does not name, is the partner's
 * mistake: 400 invalid_fields in the API's envelope, listing what is valid (Prism itself would
 * answer 404 or 500 problem+json). `dynamic=` and `seed=`, which chose generated data before the
 * dynamic mock became the server (docs/mock.md), are answered the same way, saying what to do
 * instead, rather than ignored: a test relying on them would otherwise read examples unawares.
 */
import type { ContractOperation } from "../contract/operations.ts";
import { ApiError } from "../server/domain/errors.ts";
import type { PrismChoice } from "./prism-engine.ts";

export interface Preference extends PrismChoice {
  /** The partner chose the answer (a code or an example): it is sent as Prism made it. */
  explicit: boolean;
}

/** `code=402, example="plan_required"` → `{ code: "402", example: "plan_required" }`; names lower-cased. */
export function parsePrefer(header: string): Record<string, string> {
  const preferences: Record<string, string> = {};
  for (const part of header.split(/[,;]/)) {
    const match = /^\s*([^=\s]+)\s*(?:=\s*(.*?))?\s*$/.exec(part);
    if (!match?.[1]) continue;
    preferences[match[1].toLowerCase()] = (match[2] ?? "").replace(/^"(.*)"$/, "$1");
  }
  return preferences;
}

/** The example names of one documented response (its `application/json` examples). */
function exampleNames(operation: ContractOperation, status: number): string[] {
  const examples = operation.responses.get(status)?.content?.["application/json"]?.examples;
  return examples ? Object.keys(examples) : [];
}

/** The status Prism answers when no code is asked for: the lowest documented 2xx. */
function defaultStatus(operation: ContractOperation): number | undefined {
  return [...operation.statuses].filter((status) => status >= 200 && status < 300).sort((a, b) => a - b)[0];
}

const list = (values: Array<string | number>) => values.join(", ");

/**
 * What the partner's `Prefer` asks of Prism, checked against the operation; throws ApiError
 * invalid_fields for a code, example or mode the operation cannot answer. Other preferences are
 * ignored, as RFC 7240 asks of a server that does not know them.
 */
export function preferenceFor(operation: ContractOperation, header: string | undefined): Preference {
  if (header === undefined) return { explicit: false };
  const asked = parsePrefer(header);
  const where = `${operation.method} ${operation.path}`;
  const statuses = [...operation.statuses].sort((a, b) => a - b);
  const choice: Preference = { explicit: false };
  if (asked.code !== undefined) {
    const code = /^\d{3}$/.test(asked.code) ? Number(asked.code) : Number.NaN;
    if (!operation.statuses.has(code)) {
      throw new ApiError(
        "invalid_fields",
        `Prefer: code=${asked.code} is not a status ${where} documents; valid codes: ${list(statuses)}.`,
      );
    }
    choice.code = code;
    choice.explicit = true;
  }
  if (asked.example !== undefined) {
    const status = choice.code ?? defaultStatus(operation);
    const names = status === undefined ? [] : exampleNames(operation, status);
    if (!names.includes(asked.example)) {
      const valid = names.length ? `valid examples of ${status}: ${list(names)}` : `its ${status} has no named example`;
      throw new ApiError(
        "invalid_fields",
        `Prefer: example=${asked.example} is not an example of ${where}; ${valid} (code=<status> chooses another response).`,
      );
    }
    choice.exampleKey = asked.example;
    choice.explicit = true;
  }
  for (const retired of ["dynamic", "seed"])
    if (asked[retired] !== undefined)
      throw new ApiError(
        "invalid_fields",
        `Prefer: ${retired}= is no longer read: the mock answers documented examples (code=, example=), and the dynamic mock (npm run mock -- --dynamic) is the server on data of its own, which keeps what your requests make (docs/mock.md).`,
      );
  return choice;
}

/**
 * What every answer to a fuzz request must satisfy, read from openapi.yaml: never a 5xx; a
 * `Request-Id` of the documented form (the caller's own `X-Request-Id` when it sent one well
 * formed); for a contract operation, a status, headers and body the operation documents (errors
 * with a code documented for that status); anywhere else, a documented success of that endpoint
 * (endpoints.ts) or an error in the envelope whose code the contract gives that status.
 */
import { ADMIN_BASE, API_BASE, DASHBOARD_API_BASE } from "../../contract/operations.ts";
import { originForm } from "../../server/http/transport.ts";
import { describeSchemaErrors, type ValidateFunction } from "../../contract/schemas.ts";
import { type Contract, type Operation, responseViolations } from "../contract.ts";
import type { FuzzCase } from "./drafts.ts";
import { type Endpoint, endpointAt } from "./endpoints.ts";
import type { RawExchange, RawResponse } from "./raw-http.ts";

type Json = Record<string, any>;

export interface JudgeOptions {
  /**
   * The background jobs run, so /readyz must be ready. The in-process test server runs them by
   * hand, a pass at a time: there /readyz is 503 naming them, and only them, and that is right.
   */
  backgroundJobs: boolean;
}

export type Judge = (fuzzCase: FuzzCase, exchange: RawExchange) => string[];

const CONDITIONAL = /^(if-none-match|if-modified-since|if-match|if-unmodified-since|if-range)$/;

/** The path a request-target names, as the server reads it (server/http/transport.ts originForm); null for `*` and an authority. */
function pathOf(target: string): string | null {
  const url = originForm(target);
  return url.startsWith("/") ? url.split("?")[0]! : null;
}

function asHeaders(response: RawResponse): Headers | string {
  try {
    return new Headers(response.headers.map(([name, value]) => [name, value]));
  } catch (error) {
    return `a header that is not valid HTTP: ${(error as Error).message}`;
  }
}

/** An answer that stays open until the client leaves (GET /webhooks/listen). */
function isEventStream(response: RawResponse): boolean {
  return response.status === 200 && /^text\/event-stream\b/i.test(response.header("content-type") ?? "");
}

export function createJudge(contract: Contract, { backgroundJobs }: JudgeOptions): Judge {
  const components = contract.doc.components as Json;
  const requestId = new RegExp(components.headers.RequestId.schema.pattern);
  const envelope: ValidateFunction = contract.compile(components.schemas.Error);
  // The codes some operation documents for each status: what an answer outside the operations may carry.
  const codesByStatus = new Map<number, Set<string>>();
  for (const op of contract.operations) {
    for (const [status, response] of op.responses) {
      for (const code of response.codes) codesByStatus.set(status, (codesByStatus.get(status) ?? new Set()).add(code));
    }
  }

  /** An error in the envelope, with a code the contract documents for its status; null when it is one. */
  function errorProblem(response: RawResponse, head: boolean): string | null {
    if (response.status < 400) return `a ${response.status} where an error was due`;
    const codes = codesByStatus.get(response.status);
    if (!codes) return `status ${response.status} is documented for no operation`;
    const type = response.header("content-type") ?? "";
    if (!/^application\/json\b/.test(type)) return `an error answered as "${type}", not in the JSON envelope`;
    if (head) return response.body.length ? "a body in the answer to HEAD" : null;
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      return `an error body that is not JSON: ${JSON.stringify(response.text.slice(0, 80))}`;
    }
    if (!envelope(body)) return `an error body outside the envelope: ${describeSchemaErrors(envelope.errors)}`;
    const code = (body as Json).error.code as string;
    return codes.has(code)
      ? null
      : `code ${code} is documented for no ${response.status} (documented: ${[...codes].join(", ")})`;
  }

  function operationProblems(op: Operation, response: RawResponse, head: boolean): string[] {
    const headers = asHeaders(response);
    if (typeof headers === "string") return [headers];
    if (!head) return responseViolations(op, { status: response.status, headers, text: response.text });
    // HEAD is answered as GET without the body: the same status, headers and type.
    const problems = responseViolations(op, { status: response.status, headers, text: "" }).filter(
      (problem) => !problem.startsWith("body "),
    );
    return response.body.length ? [...problems, "a body in the answer to HEAD"] : problems;
  }

  function readinessProblem(response: RawResponse, head: boolean): string | null {
    if (head) return null;
    let checks: Json;
    try {
      checks = JSON.parse(response.text).checks;
    } catch {
      return "a 503 from /readyz without its JSON body";
    }
    const failing = Object.entries(checks ?? {})
      .filter(([, state]) => state !== "ok")
      .map(([check]) => check);
    const expected =
      failing.length > 0 && failing.every((check) => check === "lifecycle_sweeper" || check === "delivery_worker");
    return expected ? null : `/readyz is 503 with ${JSON.stringify(checks)}: the database or migrations failed`;
  }

  function endpointProblem(
    endpoint: Endpoint,
    method: string,
    conditional: boolean,
    response: RawResponse,
    head: boolean,
  ): string | null {
    const successes = [...(endpoint.successes[method] ?? []), ...(conditional ? (endpoint.conditional ?? []) : [])];
    if (successes.includes(response.status)) return null;
    if (endpoint.name === "readyz" && response.status === 503 && method === "GET" && !backgroundJobs)
      return readinessProblem(response, head);
    if (response.status < 400) return `${response.status} is not a documented answer of ${method} ${endpoint.path}`;
    return errorProblem(response, head);
  }

  /** Problems of the answer to the request itself (not to bytes that followed it). */
  function answerProblems(fuzzCase: FuzzCase, response: RawResponse): string[] {
    const { method: sent, target, headers } = fuzzCase.request;
    const head = sent === "HEAD";
    const method = head ? "GET" : sent;
    if (fuzzCase.transport && response.status === 400 && errorProblem(response, head) === null) return [];
    const path = pathOf(target);
    if (path === null) return [errorProblem(response, head)].filter((problem) => problem !== null);
    const base = [API_BASE, ADMIN_BASE, DASHBOARD_API_BASE].find(
      (prefix) => path === prefix || path.startsWith(`${prefix}/`),
    );
    if (base) {
      const op = contract.match(
        method,
        path.slice(base.length) || "/",
        base === ADMIN_BASE,
        base === DASHBOARD_API_BASE,
      );
      if (op) return operationProblems(op, response, head);
    } else {
      const endpoint = endpointAt(path);
      const conditional = headers.some(([name]) => CONDITIONAL.test(name.toLowerCase()));
      if (endpoint)
        return [endpointProblem(endpoint, method, conditional, response, head)].filter((problem) => problem !== null);
    }
    // The operator token guards all of /admin/v1, paths no operation has included, and an
    // address that failed it 5 times is made to wait (429) before its next comparison.
    const allowed = base === ADMIN_BASE ? [404, 401, 429] : [404];
    if (!allowed.includes(response.status))
      return [`${response.status} for a path and method no operation or endpoint has, not ${allowed.join(" or ")}`];
    return [errorProblem(response, head)].filter((problem) => problem !== null);
  }

  function everyAnswerProblems(fuzzCase: FuzzCase, response: RawResponse): string[] {
    const problems: string[] = [];
    if (response.truncated) problems.push(`an answer cut short after ${response.body.length} bytes`);
    if (response.status >= 500 && !(response.status === 503 && pathOf(fuzzCase.request.target) === "/readyz"))
      problems.push(`a ${response.status} to client input`);
    const id = response.header("request-id");
    if (id === undefined) problems.push("no Request-Id");
    else if (!requestId.test(id)) problems.push(`Request-Id ${JSON.stringify(id)} is not of the documented form`);
    return problems;
  }

  /** The caller's `X-Request-Id`, when it sent exactly one of the documented form and the request reached the app. */
  function echoProblem(fuzzCase: FuzzCase, response: RawResponse): string | null {
    if (fuzzCase.transport) return null;
    const sent = fuzzCase.request.headers
      .filter(([name]) => name.toLowerCase() === "x-request-id")
      .map(([, value]) => value);
    if (sent.length !== 1 || !requestId.test(sent[0]!)) return null;
    return response.header("request-id") === sent[0]
      ? null
      : `Request-Id ${response.header("request-id")} is not the X-Request-Id sent (${sent[0]})`;
  }

  return function judge(fuzzCase, exchange) {
    const [first, ...rest] = exchange.responses;
    if (!first) {
      if (exchange.garbage !== null) return [`an answer that is not HTTP: ${JSON.stringify(exchange.garbage)}`];
      if (exchange.timedOut) return [`no answer within ${Math.round(exchange.ms)} ms`];
      return ["the connection was closed without an answer"];
    }
    const problems = [
      ...everyAnswerProblems(fuzzCase, first),
      ...answerProblems(fuzzCase, first),
      echoProblem(fuzzCase, first),
      ...fuzzCase.expects.map((expect) => expect(first)),
      // What follows answers the bytes after the request, which are no request at all.
      ...rest.flatMap((response) => [
        ...everyAnswerProblems(fuzzCase, response),
        response.status === 400
          ? errorProblem(response, false)
          : `a ${response.status} to the bytes after the request, not 400`,
      ]),
      exchange.garbage === null
        ? null
        : `bytes that are not HTTP after the answer: ${JSON.stringify(exchange.garbage)}`,
      // Bytes after an event stream wait for its end, which is the client's to choose.
      fuzzCase.untilClose && exchange.timedOut && !isEventStream(first)
        ? `the bytes after the request got no answer within ${Math.round(exchange.ms)} ms`
        : null,
    ];
    return problems.filter((problem): problem is string => problem !== null);
  };
}

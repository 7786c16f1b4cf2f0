/**
 * A fuzz request while it is being put together: generators fill it in and mutations change it,
 * and only `toCase` turns it into bytes, so a mutation of the framing (a Content-Length that
 * lies, chunked encoding) sees the final body.
 */
import type { RawRequest, RawResponse } from "./raw-http.ts";

/** One generated request and what its answers must satisfy beyond what every answer must. */
export interface FuzzCase {
  label: string;
  request: RawRequest;
  /**
   * The framing is broken on purpose (a Content-Length that lies, chunked garbage, an unknown
   * method, a body announced over the limit): the transport's own refusal, 400 in the error
   * envelope (docs/operators.md, "Transport limits"), is a right answer too.
   */
  transport: boolean;
  /** Bytes follow the request (a Content-Length shorter than the body): every answer is read and judged. */
  untilClose: boolean;
  /** Checks of the first answer that follow from what was sent; each returns null or what is wrong. */
  expects: ReadonlyArray<(response: RawResponse) => string | null>;
}

export interface Draft {
  method: string;
  target: string;
  version: "HTTP/1.1" | "HTTP/1.0";
  /** Host values, in order: none, one, or several. */
  host: string[];
  headers: Array<[string, string]>;
  body: Buffer | null;
  /** `exact`: the body's length (none without a body); otherwise the Content-Length values written. */
  length: "exact" | string[];
  /** The body goes in chunks of these sizes, each announced in hex, then the last chunk. */
  chunks: number[] | null;
  /** Bytes written after the message, as they are. */
  trailing: Buffer | null;
  labels: string[];
  transport: boolean;
  untilClose: boolean;
  expects: Array<(response: RawResponse) => string | null>;
}

export function draft(method: string, target: string, host: string): Draft {
  return {
    method,
    target,
    version: "HTTP/1.1",
    host: [host],
    headers: [],
    body: null,
    length: "exact",
    chunks: null,
    trailing: null,
    labels: [],
    transport: false,
    untilClose: false,
    expects: [],
  };
}

/** A draft changed by one step of a generator, with a label saying what it did. */
export type Mutation = { label: string; apply(draft: Draft): Draft };

export function mutate(label: string, apply: (draft: Draft) => Partial<Draft>): Mutation {
  return { label, apply: (draft) => ({ ...draft, ...apply(draft), labels: [...draft.labels, label] }) };
}

/** The draft's headers with `name` (any case) replaced by `value`, or removed for null. */
export function headersWith(draft: Draft, name: string, value: string | null): Array<[string, string]> {
  const others = draft.headers.filter(([candidate]) => candidate.toLowerCase() !== name.toLowerCase());
  return value === null ? others : [...others, [name, value]];
}

function chunked(body: Buffer, sizes: number[]): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= body.length) break;
    const chunk = body.subarray(at, at + Math.max(1, size));
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n"));
    at += chunk.length;
  }
  if (at < body.length)
    parts.push(Buffer.from(`${(body.length - at).toString(16)}\r\n`), body.subarray(at), Buffer.from("\r\n"));
  parts.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(parts);
}

export function toCase(draft: Draft): FuzzCase {
  const body = draft.body ?? Buffer.alloc(0);
  const lengths =
    draft.length === "exact" ? (draft.body === null || draft.chunks ? [] : [String(body.length)]) : draft.length;
  const headers: Array<[string, string]> = [
    ...draft.host.map((host): [string, string] => ["Host", host]),
    ...draft.headers,
    ...(draft.chunks ? [["Transfer-Encoding", "chunked"] as [string, string]] : []),
    ...lengths.map((length): [string, string] => ["Content-Length", length]),
  ];
  const payload = draft.chunks ? chunked(body, draft.chunks) : body;
  return {
    label: draft.labels.join("; ") || "as generated",
    request: {
      method: draft.method,
      target: draft.target,
      version: draft.version,
      headers,
      body: draft.trailing ? Buffer.concat([payload, draft.trailing]) : payload,
    },
    transport: draft.transport,
    untilClose: draft.untilClose,
    expects: draft.expects,
  };
}

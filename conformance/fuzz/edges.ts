/**
 * Protocol edges, sent to every operation and endpoint they apply to rather than drawn at random:
 * request lines HTTP allows but rarely sees (`GET *`, CONNECT, absolute-form), requests it forbids
 * (no Host, two Hosts, a Content-Length next to chunked encoding), headers that could turn an
 * answer into an empty one (Expect, If-None-Match), a JSON Content-Type with no body, a body
 * announced over the limit, and webhook URLs whose host is no host name.
 */
import fc from "fast-check";
import { ADMIN_BASE, API_BASE, DASHBOARD_API_BASE } from "../../contract/operations.ts";
import type { Contract, Operation } from "../contract.ts";
import { type FuzzWorld, validBodies } from "./cases.ts";
import { sessionFor } from "./dashboard.ts";
import { type Draft, draft, type FuzzCase, headersWith, toCase } from "./drafts.ts";
import { ENDPOINTS, type Endpoint } from "./endpoints.ts";
import type { RawResponse } from "./raw-http.ts";

export interface Edge {
  label: string;
  build(world: FuzzWorld, port: number): FuzzCase;
}

type Json = Record<string, any>;

const JSON_TYPE = "application/json";

function statusIs(...statuses: number[]) {
  return (response: RawResponse) =>
    statuses.includes(response.status) ? null : `expected ${statuses.join(" or ")}, got ${response.status}`;
}

function errorIs(status: number, code: string) {
  return (response: RawResponse) => {
    let got: unknown;
    try {
      got = JSON.parse(response.text)?.error?.code;
    } catch {
      got = undefined;
    }
    return response.status === status && got === code
      ? null
      : `expected ${status} ${code}, got ${response.status} ${got ?? ""}`.trimEnd();
  };
}

const transport = (start: Draft, ...expects: FuzzCase["expects"]): Draft => ({
  ...start,
  transport: true,
  expects: [...start.expects, ...expects],
});

const raw = (method: string, target: string, bytes: string | Buffer): FuzzCase => ({
  label: "raw bytes",
  request: {
    method,
    target,
    version: "HTTP/1.1",
    headers: [],
    body: Buffer.alloc(0),
    raw: typeof bytes === "string" ? Buffer.from(bytes, "latin1") : bytes,
  },
  transport: true,
  untilClose: false,
  expects: [],
});

/** The first bytes of a TLS 1.2 ClientHello: what a client configured for https sends. */
const TLS_HELLO = Buffer.from("160301002e0100002a0303" + "00".repeat(32) + "0000020035010000", "hex");

const discovery = (world: FuzzWorld) => draft("GET", `${API_BASE}/`, world.host);

function bodyless(world: FuzzWorld, key: string): Draft {
  const start = draft("POST", `${API_BASE}/streams`, world.host);
  return {
    ...start,
    headers: [
      ["Authorization", `Bearer ${key}`],
      ["Content-Type", JSON_TYPE],
    ],
  };
}

/** Edges of the request line and the framing, sent once. */
const PROTOCOL_EDGES: readonly Edge[] = [
  { label: "GET * (asterisk-form)", build: (world) => toCase(draft("GET", "*", world.host)) },
  { label: "OPTIONS * (asterisk-form)", build: (world) => toCase(draft("OPTIONS", "*", world.host)) },
  {
    label: "CONNECT to the server's own authority",
    build: (world, port) => toCase(draft("CONNECT", `127.0.0.1:${port}`, world.host)),
  },
  { label: "CONNECT to a path", build: (world) => toCase(draft("CONNECT", `${API_BASE}/`, world.host)) },
  {
    label: "HTTP/1.1 without Host: 400",
    build: (world) => toCase(transport({ ...discovery(world), host: [] }, statusIs(400))),
  },
  {
    label: "two equal Host headers: 400",
    build: (world) => toCase(transport({ ...discovery(world), host: [world.host, world.host] }, statusIs(400))),
  },
  {
    label: "two different Host headers: 400",
    build: (world) => toCase(transport({ ...discovery(world), host: [world.host, "evil.example"] }, statusIs(400))),
  },
  {
    label: "HTTP/1.0 without Host",
    build: (world) => toCase({ ...discovery(world), version: "HTTP/1.0", host: [], expects: [statusIs(200)] }),
  },
  { label: "an HTTP/2 connection preface", build: () => raw("PRI", "*", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") },
  { label: "a TLS ClientHello", build: () => raw("?", "*", TLS_HELLO) },
  {
    label: "HTTP/2.0 on the request line",
    build: (world) => raw("GET", `${API_BASE}/`, `GET ${API_BASE}/ HTTP/2.0\r\nHost: ${world.host}\r\n\r\n`),
  },
  {
    label: "HTTP/1.2 on the request line",
    build: (world) => raw("GET", `${API_BASE}/`, `GET ${API_BASE}/ HTTP/1.2\r\nHost: ${world.host}\r\n\r\n`),
  },
  { label: "a request line without a version", build: () => raw("GET", `${API_BASE}/`, `GET ${API_BASE}/\r\n\r\n`) },
  {
    label: "two spaces in the request line",
    build: (world) => raw("GET", `${API_BASE}/`, `GET  ${API_BASE}/ HTTP/1.1\r\nHost: ${world.host}\r\n\r\n`),
  },
  {
    label: "empty lines before the request line",
    build: (world) => ({
      ...raw("GET", `${API_BASE}/`, `\r\n\r\nGET ${API_BASE}/ HTTP/1.1\r\nHost: ${world.host}\r\n\r\n`),
      transport: false,
    }),
  },
  {
    label: "bare LF line endings",
    build: (world) => raw("GET", `${API_BASE}/`, `GET ${API_BASE}/ HTTP/1.1\nHost: ${world.host}\n\n`),
  },
  {
    label: "a space before a header's colon",
    build: (world) => raw("GET", `${API_BASE}/`, `GET ${API_BASE}/ HTTP/1.1\r\nHost : ${world.host}\r\n\r\n`),
  },
  {
    label: "a NUL in a header value",
    build: (world) =>
      raw("GET", `${API_BASE}/`, `GET ${API_BASE}/ HTTP/1.1\r\nHost: ${world.host}\r\nX-A: a\0b\r\n\r\n`),
  },
  {
    label: "an obs-fold header line",
    build: (world) =>
      raw("GET", `${API_BASE}/`, `GET ${API_BASE}/ HTTP/1.1\r\nHost: ${world.host}\r\nX-A: a\r\n b\r\n\r\n`),
  },
  {
    label: "Content-Length and Transfer-Encoding: chunked together: 400",
    build: (world) =>
      toCase(
        transport(
          { ...bodyless(world, world.property.key), body: Buffer.from("{}"), chunks: [2], length: ["2"] },
          statusIs(400),
        ),
      ),
  },
  ...["zz\r\n{}\r\n0\r\n\r\n", "1\r\n{}\r\n0\r\n\r\n", "-2\r\n{}\r\n0\r\n\r\n", "2;\0\r\n{}\r\n0\r\n\r\n"].map(
    (garbage): Edge => ({
      label: `chunked garbage ${JSON.stringify(garbage)}: 400`,
      build: (world) => {
        const start = bodyless(world, world.property.key);
        return toCase(
          transport(
            {
              ...start,
              headers: [...start.headers, ["Transfer-Encoding", "chunked"]],
              body: Buffer.from(garbage),
              length: [],
            },
            statusIs(400),
          ),
        );
      },
    }),
  ),
  {
    label: "chunked GET with only the last chunk",
    build: (world) =>
      toCase({
        ...discovery(world),
        headers: [["Transfer-Encoding", "chunked"]],
        body: Buffer.from("0\r\n\r\n"),
        length: [],
        expects: [statusIs(200)],
      }),
  },
  {
    label: "Expect: 100-continue without a body",
    build: (world) => toCase({ ...discovery(world), headers: [["Expect", "100-continue"]], expects: [statusIs(200)] }),
  },
  {
    label: "an absolute-form target is served like its path",
    build: (world, port) =>
      toCase({ ...draft("GET", `http://127.0.0.1:${port}${API_BASE}/creators`, world.host), expects: [statusIs(200)] }),
  },
];

/** A browser's credentials on the dashboard API: the session cookie, its CSRF token, the server's Origin. */
function dashboardHeaders(op: Operation, world: FuzzWorld): Array<[string, string]> {
  const { session, csrf } = sessionFor(world.dashboard, op.operationId);
  return [
    ["Cookie", `lsh_session=${session}`],
    ["X-CSRF-Token", csrf],
    ["Origin", world.dashboard.origin],
  ];
}

/** The path of `op` with ids of the world, the right credentials, and a body its schema accepts. */
function ordinary(op: Operation, world: FuzzWorld): Draft {
  const known: Record<string, string | undefined> = op.dashboard
    ? Object.fromEntries(Object.entries(world.dashboard.ids).map(([name, ids]) => [name, ids[0]]))
    : { id: world.property.streamIds[0], brand_id: world.brandIds[0], key_id: world.keyIds[0] };
  const path = op.path.replace(
    /\{([^}]+)\}/g,
    (_template, name: string) => known[name] ?? "8d4e2a7b-1c9f-4b3e-a6d5-7e0f2b9c4d18",
  );
  const start = draft(
    op.method,
    (op.dashboard ? DASHBOARD_API_BASE : op.admin ? ADMIN_BASE : API_BASE) + path,
    world.host,
  );
  const headers: Array<[string, string]> = op.dashboard
    ? dashboardHeaders(op, world)
    : [["Authorization", `Bearer ${op.admin ? world.adminToken : world.property.key}`]];
  if (!op.requestSchema) return { ...start, headers };
  const [body] = fc.sample(validBodies(op, world), { seed: 1, numRuns: 1 });
  return { ...start, headers: [...headers, ["Content-Type", JSON_TYPE]], body: Buffer.from(JSON.stringify(body)) };
}

/** An announced body over the limit with only its start sent: refused at once, not held until the request time-out. */
function announcedOverLimit(start: Draft, length: number): Draft {
  return transport({ ...setBody(start, '{"a":'), length: [String(length)] });
}

function setBody(start: Draft, body: string): Draft {
  return { ...start, headers: headersWith(start, "Content-Type", JSON_TYPE), body: Buffer.from(body) };
}

/** The edges of one operation of `contract`. */
function operationEdges(contract: Contract, op: Operation): Edge[] {
  const name = `${op.operationId} (${op.method} ${op.path})`;
  const edges: Edge[] = [
    {
      label: `${name} with Expect: bogus`,
      build: (world) =>
        toCase(transport({ ...ordinary(op, world), headers: [...ordinary(op, world).headers, ["Expect", "bogus"]] })),
    },
    {
      label: `${name} announcing a body over the limit`,
      build: (world) => toCase(announcedOverLimit(ordinary(op, world), 10_000_000_000)),
    },
    {
      label: `OPTIONS on ${name}'s path`,
      build: (world) =>
        toCase({
          ...ordinary(op, world),
          method: "OPTIONS",
          body: null,
          headers: ordinary(op, world).headers.filter(([header]) => header !== "Content-Type"),
        }),
    },
  ];
  if (op.method === "GET") {
    for (const [header, value] of [
      ["If-None-Match", "*"],
      ["If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT"],
    ] as const) {
      edges.push({
        label: `${name} with ${header}: ${value}`,
        build: (world) =>
          toCase({ ...ordinary(op, world), headers: [...ordinary(op, world).headers, [header, value]] }),
      });
    }
  }
  // The contract's `requestBody.required`: without a body the answer is 400 missing_fields.
  if (contract.doc.paths[op.path]?.[op.method.toLowerCase()]?.requestBody?.required === true) {
    const without = (world: FuzzWorld): Draft => ({
      ...ordinary(op, world),
      body: null,
      expects: [errorIs(400, "missing_fields")],
    });
    edges.push(
      {
        label: `${name} with a JSON Content-Type and no body: 400 missing_fields`,
        build: (world) => toCase(without(world)),
      },
      {
        label: `${name} over HTTP/1.0 with a JSON Content-Type and no body: 400 missing_fields`,
        build: (world) => toCase({ ...without(world), version: "HTTP/1.0" }),
      },
      {
        label: `${name} with a JSON Content-Type and Content-Length: 0: 400 missing_fields`,
        build: (world) => toCase({ ...without(world), body: Buffer.alloc(0) }),
      },
    );
  }
  return edges;
}

/** The LiveKit webhook's body limit (server/http/routes/provider-webhook.ts). */
const LIVEKIT_BODY_LIMIT_BYTES = 256 * 1024;

/** The edges of one endpoint outside the contract. */
function endpointEdges(endpoint: Endpoint): Edge[] {
  const [method = "GET"] = Object.keys(endpoint.successes);
  const start = (world: FuzzWorld): Draft => {
    const token = endpoint.name === "metrics" ? world.metricsToken : world.adminToken;
    return { ...draft(method, endpoint.path, world.host), headers: [["Authorization", `Bearer ${token}`]] };
  };
  const edges: Edge[] = [
    { label: `OPTIONS ${endpoint.path}`, build: (world) => toCase({ ...start(world), method: "OPTIONS" }) },
    {
      label: `${method} ${endpoint.path} with Expect: bogus`,
      build: (world) => toCase(transport({ ...start(world), headers: [...start(world).headers, ["Expect", "bogus"]] })),
    },
    {
      label: `${method} ${endpoint.path} announcing a body over the limit`,
      build: (world) =>
        toCase(
          announcedOverLimit(
            start(world),
            endpoint.name === "LiveKit webhook" ? LIVEKIT_BODY_LIMIT_BYTES + 1 : 10_000_000_000,
          ),
        ),
    },
  ];
  if (method === "GET") {
    edges.push({
      label: `GET ${endpoint.path} with If-None-Match: *`,
      build: (world) => toCase({ ...start(world), headers: [...start(world).headers, ["If-None-Match", "*"]] }),
    });
  }
  return edges;
}

/** Hosts no URL may name: empty labels, labels that start or end with a hyphen, underscores, over-long labels and names. */
const INVALID_WEBHOOK_HOSTS = [
  "a..b",
  "-bad-.example",
  "bad-.example",
  "x_y.example",
  `${"a".repeat(64)}.example`,
  `${"a.".repeat(127)}example`,
];

const WEBHOOK_URL_EDGES: readonly Edge[] = INVALID_WEBHOOK_HOSTS.map((host) => ({
  label: `POST /webhooks with https://${host.length > 40 ? `${host.slice(0, 20)}…` : host}/: 400 invalid_url`,
  build: (world: FuzzWorld) =>
    toCase({
      ...setBody(
        bodyless(world, world.property.key),
        JSON.stringify({ url: `https://${host}/hooks`, events: ["stream.ended"] } satisfies Json),
      ),
      target: `${API_BASE}/webhooks`,
      expects: [errorIs(400, "invalid_url")],
    }),
}));

/** Every edge: the protocol's, each operation's, each endpoint's and the webhook URLs'. */
export function allEdges(contract: Contract): Edge[] {
  const edges = [
    ...PROTOCOL_EDGES,
    ...contract.operations.flatMap((op) => operationEdges(contract, op)),
    ...ENDPOINTS.flatMap(endpointEdges),
    ...WEBHOOK_URL_EDGES,
  ];
  // A failure report names the edge.
  return edges.map((edge) => ({
    ...edge,
    build: (world, port) => ({ ...edge.build(world, port), label: edge.label }),
  }));
}

/**
 * The fuzz requests of each operation of openapi.yaml and of each endpoint outside it: a start
 * (a target with path ids and a query string, a body with its Content-Type, an Authorization),
 * then headers, a Host and framing mutations on top (mutations.ts). For the public operations
 * the starts include the invalid input of the property tests (property-cases.ts), kept with
 * their exact expectations when nothing is changed on top.
 */
import fc from "fast-check";
import { ADMIN_BASE, API_BASE, DASHBOARD_API_BASE } from "../../contract/operations.ts";
import type { SchemaArbitraries } from "../arbitraries.ts";
import type { Exchange, Request } from "../client.ts";
import type { Contract, Operation } from "../contract.ts";
import { PROPERTY_CASES, type World } from "../property-cases.ts";
import { type DashboardFuzzWorld, dashboardCredentials, sessionFor } from "./dashboard.ts";
import { type Draft, draft, type FuzzCase, mutate, type Mutation, headersWith, toCase } from "./drafts.ts";
import type { Endpoint } from "./endpoints.ts";
import { authorizations, framingMutations, headerMutations, hostMutations } from "./mutations.ts";
import { type Payload, payloads } from "./payloads.ts";
import type { RawResponse } from "./raw-http.ts";

type Json = Record<string, any>;

export interface FuzzWorld {
  contract: Contract;
  arbitraries: SchemaArbitraries;
  /** The property tests' world: a roomy brand's all-scopes test key, creators, streams. */
  property: World;
  /** The Host every request names unless a mutation changes it. */
  host: string;
  adminToken: string;
  metricsToken: string;
  /** A brand and keys of their own for the operator operations to change at will (not the property world's). */
  brandIds: string[];
  keyIds: string[];
  /** The rooms of the property world's streams, for LiveKit events about them. */
  roomNames: string[];
  /** LiveKit webhook bodies signed with the server's key pair, as LiveKit signs them. */
  signedWebhooks: ReadonlyArray<{ body: string; authorization: string }>;
  /** The dashboard API's: a brand of its own with signed-in members, and its ids. */
  dashboard: DashboardFuzzWorld;
}

/** A URL-safe form of any string (a lone surrogate, which no URL can carry, becomes U+FFFD). */
function encoded(value: string): string {
  return encodeURIComponent(
    value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd"),
  );
}

/** Path segments no id looks like: bad percent-encoding, dot segments, slashes, very long. */
const segmentGarbage = fc.oneof(
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).map(encoded),
  fc.constantFrom(
    "%ZZ",
    "%",
    "%00",
    "..",
    ".",
    "%2e%2e",
    "a%2Fb",
    "%C0%AF",
    "~!$&'()*+,;=:@",
    "x".repeat(3000),
    "%F0%9F%92%A5",
    "null",
    "-1",
    "1e400",
    "%7B%7D",
    "%20",
  ),
);

/** Query strings written raw: empty names and values, bad escapes, prototype names, thousands of pairs. */
const queryGarbage = fc.constantFrom(
  "?",
  "?%",
  "?%ZZ=1",
  "?&&&",
  "?=",
  "?=1",
  "?a[b][c]=1",
  "?__proto__[x]=1",
  "?constructor=1",
  `?${"a=1&".repeat(1500)}`,
  "#fragment",
  "?a=1#b",
  "?%00=%00",
);

function pathValues(name: string, op: Operation, world: FuzzWorld): fc.Arbitrary<string> {
  const known = op.dashboard
    ? (world.dashboard.ids[name] ?? [])
    : name === "id"
      ? world.property.streamIds
      : name === "brand_id"
        ? world.brandIds
        : name === "key_id"
          ? world.keyIds
          : [];
  return fc.oneof(...(known.length ? [{ weight: 3, arbitrary: fc.constantFrom(...known) }] : []), fc.uuid(), {
    weight: 2,
    arbitrary: segmentGarbage,
  });
}

/**
 * Texts a careless or hostile client sends for a number, each of which some parser reads as one
 * (Ajv's coercion took `Infinity` and `1e309` past a `maximum`, and SQL answered 500): every
 * numeric query parameter of the public, dashboard and operator APIs gets them.
 */
const numberGarbage = fc.constantFrom(
  "Infinity",
  "-Infinity",
  "1e309",
  "-1e309",
  "9e99",
  "-1",
  "NaN",
  "0x10",
  "0b11",
  "1.5",
  "-0",
  "1e2",
  "+5",
  " 7",
  "7 ",
  "9".repeat(400),
  "9007199254740993",
  "2147483648",
  "00000000000000000001",
);

/** Query values as strings: valid for the parameter's schema, invalid for it, or anything (numbers written every odd way). */
function queryValues(schema: Json, arbitraries: SchemaArbitraries): fc.Arbitrary<string> {
  const asText = (value: unknown) => (typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
  const numeric = schema.type === "integer" || schema.type === "number";
  return fc.oneof(
    arbitraries.valid(schema).map(asText),
    arbitraries.invalid(schema).map(asText),
    fc.string({ unit: "grapheme", maxLength: 20 }),
    { weight: numeric ? 3 : 1, arbitrary: numberGarbage },
  );
}

function targets(op: Operation, world: FuzzWorld): fc.Arbitrary<string> {
  const base = op.dashboard ? DASHBOARD_API_BASE : op.admin ? ADMIN_BASE : API_BASE;
  const names = op.path.match(/\{[^}]+\}/g)?.map((template) => template.slice(1, -1)) ?? [];
  const path = fc.tuple(...names.map((name) => pathValues(name, op, world))).map((values) => {
    let at = 0;
    return base + op.path.replace(/\{[^}]+\}/g, () => values[at++]!);
  });
  const parameters = op.parameters.filter((parameter) => parameter.in === "query");
  const pair = fc.oneof(
    ...parameters.map((parameter) =>
      fc.tuple(fc.constant(parameter.name as string), queryValues(parameter.schema ?? {}, world.arbitraries)),
    ),
    fc.tuple(fc.constantFrom("x", "foo[]", "__proto__", "a[b]", ""), fc.string({ maxLength: 8 })),
  );
  const query = fc.oneof(
    { weight: 3, arbitrary: fc.constant("") },
    {
      weight: 4,
      arbitrary: fc
        .array(pair, { minLength: 1, maxLength: 4 })
        .map((pairs) => `?${pairs.map(([name, value]) => `${encoded(name)}=${encoded(value)}`).join("&")}`),
    },
    queryGarbage,
  );
  return fc.tuple(path, query).map(([at, search]) => at + search);
}

function withPayload(start: Draft, payload: Payload): Draft {
  const headers =
    payload.contentType === null ? start.headers : headersWith(start, "Content-Type", payload.contentType);
  return {
    ...start,
    headers,
    body: payload.body,
    labels: [...start.labels, payload.label],
    transport: start.transport || payload.transport === true,
  };
}

/** Headers, then at times another Host, then at times the framing: applied in that order. */
const extras: fc.Arbitrary<Mutation[]> = fc
  .tuple(
    fc.array(headerMutations, { maxLength: 3 }),
    fc.option(hostMutations, { freq: 12 }),
    fc.option(framingMutations(), { freq: 3 }),
  )
  .map(([headers, host, framing]) => [...headers, ...(host ? [host] : []), ...(framing ? [framing] : [])]);

const applyAll = (start: Draft, mutations: readonly Mutation[]) =>
  mutations.reduce((current, mutation) => mutation.apply(current), start);

/** Bodies the schema accepts; a webhook's URL names a host that never resolves, so no delivery leaves the machine. */
export function validBodies(op: Operation, world: FuzzWorld): fc.Arbitrary<unknown> {
  const schema = op.requestSchema!;
  const hints: Record<string, fc.Arbitrary<unknown>> = {};
  if (schema.properties?.creator_id) hints.creator_id = fc.constantFrom(...world.property.creatorIds);
  if (schema.properties?.brand_id) hints.brand_id = fc.constantFrom(...world.brandIds);
  return world.arbitraries.valid(schema, hints).map((body) => {
    if (typeof body !== "object" || body === null || typeof (body as Json).url !== "string") return body;
    const url = new URL((body as Json).url);
    url.hostname = `${url.hostname.replace(/[^a-z0-9-]/gi, "") || "x"}.receiver.invalid`;
    return { ...(body as Json), url: url.href };
  });
}

/** A property-test request as raw bytes would carry it. */
function fromRequest(request: Request, world: FuzzWorld): Draft {
  const start = draft(request.method, (request.internal ? ADMIN_BASE : API_BASE) + request.path, world.host);
  const authorization =
    request.authorization ??
    (request.internal ? `Bearer ${world.adminToken}` : request.key ? `Bearer ${request.key}` : undefined);
  const body = request.rawBody ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
  const headers: Array<[string, string]> = [
    ...(authorization !== undefined ? [["Authorization", authorization] as [string, string]] : []),
    ...(body !== undefined ? [["Content-Type", request.contentType ?? "application/json"] as [string, string]] : []),
    ...Object.entries(request.headers ?? {}),
  ];
  return { ...start, headers, body: body === undefined ? null : Buffer.from(body, "utf8") };
}

/** The answer as the property tests' judges read it. */
function asExchange(request: Request, response: RawResponse): Exchange {
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    body = undefined;
  }
  return {
    request,
    operationId: null,
    status: response.status,
    headers: new Headers(response.headers.map(([name, value]) => [name, value])),
    text: response.text,
    body,
    violations: [],
  };
}

/** The invalid input of the property tests for `op`, with their exact expectations; null for an operation they do not cover. */
function propertyStarts(op: Operation, world: FuzzWorld): fc.Arbitrary<Draft> | null {
  const invalid = op.admin || op.dashboard ? undefined : PROPERTY_CASES[op.operationId]?.(op, world.property).invalid;
  if (!invalid) return null;
  return invalid.map((testCase) => ({
    ...fromRequest(testCase.request, world),
    labels: [`property case: ${testCase.label.slice(0, 80)}`],
    expects: [(response: RawResponse) => testCase.judge(asExchange(testCase.request, response))],
  }));
}

/** Fuzz requests for one operation of the contract. */
export function operationCases(op: Operation, world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const token = op.admin ? world.adminToken : world.property.key;
  const otherTokens = op.admin ? [world.property.key] : [world.adminToken, world.metricsToken];
  // The dashboard's API takes a browser's session, never an Authorization header.
  const credentials = op.dashboard
    ? dashboardCredentials(world.dashboard, sessionFor(world.dashboard, op.operationId), world.property.key)
    : authorizations(token, otherTokens);
  const valid = op.requestSchema ? validBodies(op, world) : fc.jsonValue({ maxDepth: 2 });
  const own = fc
    .tuple(targets(op, world), payloads(world.arbitraries, op.requestSchema, valid), credentials, extras)
    .map(([target, payload, authorization, mutations]) =>
      toCase(applyAll(authorization.apply(withPayload(draft(op.method, target, world.host), payload)), mutations)),
    );
  const fromProperties = propertyStarts(op, world);
  if (!fromProperties) return own;
  // A property case changed on top is judged by what every answer must satisfy, not by its own expectation.
  const changed = fc
    .tuple(fromProperties, extras)
    .map(([start, mutations]) => toCase(applyAll(mutations.length ? { ...start, expects: [] } : start, mutations)));
  return fc.oneof({ weight: 3, arbitrary: own }, changed);
}

/** Paths next to the real ones: other versions and prefixes, traversal, miscased, doubled slashes, well-known files. */
const UNKNOWN_PATHS = fc.constantFrom(
  "/",
  "/api",
  "/api/v2/streams",
  "/api/v1//streams",
  "/API/v1/streams",
  "/api/v1/streams/",
  "/api/v1/Streams",
  "/admin",
  "/admin/v1",
  "/admin/v1/",
  "/admin/v1/BRANDS",
  "/.env",
  "/favicon.ico",
  "/%2e%2e/%2e%2e/etc/passwd",
  "/docs/../admin/v1/brands",
  "/api/v1/../../healthz",
  "/providers/simulated/webhook",
  "/providers/livekit",
  "/healthz/",
  "/HEALTHZ",
  "/metrics/",
  "/readyz?full=1",
  "/api/v1/streams%2F",
  "/api/v1%2Fstreams",
  "/dashboard",
  "/dashboard/",
  "/dashboard/keys",
  "/dashboard/index.html",
  "/dashboard/assets/missing.js",
  "/dashboard/invitation",
  "/dashboard/api",
  "/dashboard/api/",
  "/dashboard/api/v1",
  "/dashboard/api/v2/session",
  "/dashboard/api/v1/session/",
  "/dashboard/api/v1/Session",
  "/Dashboard/api/v1/session",
  "/dashboard/API/v1/session",
  "/dashboard/../admin/v1/brands",
  "/dashboard/%2e%2e/api/v1/streams",
  "/dashboard/api/v1/modes/test/keys/%2e%2e",
);

const METHODS = fc.constantFrom("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE");

/** LiveKit-shaped JSON: the events the server acts on and others, with odd rooms, participants and times. */
export function liveKitEvents(world: FuzzWorld): fc.Arbitrary<unknown> {
  const participant = fc.record(
    {
      identity: fc.string({ maxLength: 20 }),
      kind: fc.oneof(fc.constantFrom(0, 4, "AGENT", "STANDARD", 99), fc.integer()),
      joinedAt: fc.oneof(
        fc.constantFrom("0", "-1", "99999999999999999999", "1e30", "x"),
        fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
      ),
      state: fc.constantFrom("ACTIVE", "DISCONNECTED", 3, "BOGUS"),
    },
    { requiredKeys: [] },
  );
  return fc.record(
    {
      id: fc.oneof(fc.uuid(), fc.string({ maxLength: 10 })),
      event: fc.constantFrom(
        "participant_joined",
        "participant_left",
        "participant_connection_aborted",
        "room_finished",
        "room_started",
        "track_published",
        "",
        "bogus",
      ),
      room: fc.record(
        { name: fc.oneof(fc.constantFrom(...world.roomNames), fc.string({ maxLength: 30 })) },
        { requiredKeys: [] },
      ),
      participant,
      createdAt: fc.oneof(
        fc.constantFrom("0", "-5", "99999999999999999999", "1.5", "x"),
        fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
        fc.integer(),
      ),
    },
    { requiredKeys: ["event"] },
  );
}

/** Fuzz requests for one endpoint outside the contract (endpoints.ts). */
export function endpointCases(endpoint: Endpoint, world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const path = fc.oneof(
    { weight: 6, arbitrary: fc.constant(endpoint.path) },
    fc.constantFrom(
      `${endpoint.path}/`,
      endpoint.path.toUpperCase(),
      `${endpoint.path}?x=1`,
      `/${endpoint.path}`,
      `${endpoint.path}%2F`,
      `${endpoint.path};a=b`,
    ),
    queryGarbage.map((query) => endpoint.path + query),
  );
  const methods = Object.keys(endpoint.successes);
  const method = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...methods) }, METHODS);
  const token = endpoint.name === "metrics" ? world.metricsToken : world.adminToken;
  const body: fc.Arbitrary<Mutation> =
    endpoint.name === "LiveKit webhook"
      ? fc.oneof(
          {
            weight: 2,
            arbitrary: fc.constantFrom(...world.signedWebhooks).map(({ body: signed, authorization }) =>
              mutate("a signed LiveKit webhook", (start) => ({
                body: Buffer.from(signed),
                headers: headersWith(
                  { ...start, headers: headersWith(start, "Authorization", authorization) },
                  "Content-Type",
                  "application/webhook+json",
                ),
              })),
            ),
          },
          liveKitEvents(world).map((event) =>
            mutate("an unsigned LiveKit event", (start) => ({
              body: Buffer.from(JSON.stringify(event)),
              headers: headersWith(start, "Content-Type", "application/webhook+json"),
            })),
          ),
          payloads(world.arbitraries, null, fc.jsonValue({ maxDepth: 2 })).map((payload) =>
            mutate(payload.label, (start) => withPayload(start, payload)),
          ),
        )
      : payloads(world.arbitraries, null, fc.jsonValue({ maxDepth: 2 })).map((payload) =>
          mutate(payload.label, (start) => withPayload(start, payload)),
        );
  return fc
    .tuple(method, path, authorizations(token, [world.property.key]), body, extras)
    .map(([verb, at, authorization, payload, mutations]) =>
      toCase(applyAll(payload.apply(authorization.apply(draft(verb, at, world.host))), mutations)),
    );
}

/** Fuzz requests for paths no operation or endpoint has. */
export function unknownPathCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(
      METHODS,
      UNKNOWN_PATHS,
      authorizations(world.property.key, [world.adminToken]),
      payloads(world.arbitraries, null, fc.jsonValue({ maxDepth: 2 })),
      extras,
    )
    .map(([method, path, authorization, payload, mutations]) =>
      toCase(applyAll(authorization.apply(withPayload(draft(method, path, world.host), payload)), mutations)),
    );
}

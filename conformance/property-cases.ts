/**
 * What the properties send for each public operation: invalid input (body mutations, bad query
 * and path values, bad keys) and valid input, generated from openapi.yaml's schemas, each case
 * with the answer it must get.
 */
import fc from "fast-check";
import type { SchemaArbitraries } from "./arbitraries.ts";
import type { Exchange, Request } from "./client.ts";
import type { Contract, Operation } from "./contract.ts";

type Json = Record<string, any>;

/** One generated request and what its answer must satisfy (null: fine, otherwise why not). */
export interface Case {
  label: string;
  request: Request;
  judge(exchange: Exchange): string | null;
}

/** What the cases draw on: the target's key, real creator and stream ids, the one 401 body. */
export interface World {
  contract: Contract;
  arbitraries: SchemaArbitraries;
  key: string;
  creatorIds: string[];
  streamIds: string[];
  /** A time the target's clock has passed (its first stream's `created_at`): a test server's clock may lag the real one. */
  serverTime: Date;
  canonical401: string;
}

/** Codes that mean "your input breaks the schema", which a schema-valid request must never get. */
const SCHEMA_CODES = new Set(["missing_fields", "invalid_fields"]);

function errorWith(statuses: number[], codes?: string[]) {
  return (exchange: Exchange): string | null => {
    if (!statuses.includes(exchange.status)) return `expected ${statuses.join(" or ")}`;
    if (codes && !codes.includes(exchange.body?.error?.code)) return `expected code ${codes.join(" or ")}`;
    return null;
  };
}

/** A 2xx, or an error that is about the world (unknown creator, not found…), not about the input's shape. */
function acceptedOrBusinessError(exchange: Exchange): string | null {
  if (exchange.status >= 200 && exchange.status < 300) return null;
  const code = exchange.body?.error?.code;
  return SCHEMA_CODES.has(code) ? `schema-valid input was rejected as ${code}` : null;
}

const ok200 = (exchange: Exchange) => (exchange.status === 200 ? null : "expected 200");

/** A lone surrogate cannot be put in a URL; it becomes U+FFFD, as a browser would make it. */
const wellFormed = (value: string) =>
  value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

/** `?a=1&b=2` from pairs, encoded as the SDK (openapi-fetch) does: encodeURIComponent. */
function queryString(pairs: Array<[string, string]>): string {
  return pairs.length === 0
    ? ""
    : `?${pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(wellFormed(value))}`).join("&")}`;
}

/** Unknown query parameters, which every operation ignores. */
const unknownParams = fc.array(
  fc.tuple(fc.constantFrom("x", "debug", "foo[]", "expand"), fc.string({ maxLength: 8 })),
  { maxLength: 2 },
);

/** Field names that a lookup in a plain object finds on its prototype. */
const PROTOTYPE_NAMES = fc.constantFrom("toString", "constructor", "__proto__", "valueOf", "hasOwnProperty");

const notUuid = fc
  .string({ unit: "grapheme", minLength: 1, maxLength: 40 })
  .filter((value) => value !== "." && value !== ".." && !/^[0-9a-f-]{36}$/i.test(value));

/** Bad Authorization headers; each must get the one 401 body. */
function badKeys(world: World): fc.Arbitrary<string | null> {
  return fc.oneof(
    fc.constant(null),
    fc.string({ maxLength: 40 }),
    fc.string({ minLength: 1, maxLength: 40 }).map((token) => `Bearer ${token}`),
    // Well-formed (the contract's key pattern) but never issued.
    fc.stringMatching(world.contract.limits.apiKeyPattern).map((key) => `Bearer ${key}`),
    fc.constant(`bearer ${world.key}`),
    fc.constant(`Bearer  ${world.key}`),
  );
}

function securityCases(
  op: Operation,
  world: World,
  base: (authorization: string | null) => Request,
): fc.Arbitrary<Case> {
  return badKeys(world).map((authorization) => ({
    label: `Authorization: ${JSON.stringify(authorization)}`,
    request: base(authorization),
    judge: (exchange) =>
      errorWith([401], ["unauthorized"])(exchange) ??
      (exchange.text === world.canonical401 ? null : "a 401 body that differs from the others"),
  }));
}

/** Body mutations of a valid body for `op`: what each must answer follows from the mutation. */
function bodyCases(
  op: Operation,
  world: World,
  validBody: fc.Arbitrary<Json>,
  fieldCodes: ReadonlyMap<string, string>,
): fc.Arbitrary<Case> {
  const schema = op.requestSchema!;
  const required: string[] = schema.required ?? [];
  const properties = Object.keys(schema.properties ?? {});
  const send = (body: Partial<Request>): Request => ({ method: op.method, path: op.path, key: world.key, ...body });
  const codeFor = (field: string) => [fieldCodes.get(field) ?? "invalid_fields"];

  const missing = fc.tuple(validBody, fc.constantFrom(...required)).map(([body, field]) => {
    const { [field]: _dropped, ...rest } = body;
    return { label: `without ${field}`, request: send({ body: rest }), judge: errorWith([400], ["missing_fields"]) };
  });
  const wrongField = fc
    .constantFrom(...properties)
    .chain((field) => fc.tuple(fc.constant(field), validBody, world.arbitraries.invalid(schema.properties[field])))
    .map(([field, body, value]) => ({
      label: `${field}: ${JSON.stringify(value)?.slice(0, 60)}`,
      request: send({ body: { ...body, [field]: value } }),
      judge: errorWith([400], codeFor(field)),
    }));
  const extra = fc
    .tuple(
      validBody,
      fc
        .oneof(fc.string({ minLength: 1, maxLength: 12 }), PROTOTYPE_NAMES)
        .filter((name) => !properties.includes(name)),
      fc.jsonValue({ maxDepth: 1 }),
    )
    .map(([body, name, value]) => ({
      label: `extra field ${JSON.stringify(name)}`,
      request: send({ body: { ...body, [name]: value } }),
      judge: errorWith([400], ["invalid_fields"]),
    }));
  const notObject = fc
    .oneof(
      fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    )
    .map((body) => ({
      label: `body ${JSON.stringify(body).slice(0, 40)}`,
      request: send({ rawBody: JSON.stringify(body) }),
      judge: errorWith([400], ["missing_fields", "invalid_fields"]),
    }));
  const malformed = fc
    .tuple(validBody, fc.nat())
    .map(([body, cut]) => JSON.stringify(body).slice(0, 1 + (cut % JSON.stringify(body).length)))
    .filter((text) => {
      try {
        JSON.parse(text);
        return false;
      } catch {
        return true;
      }
    })
    .map((text) => ({
      label: `malformed JSON ${text.slice(0, 40)}`,
      request: send({ rawBody: text }),
      judge: errorWith([400], ["missing_fields"]),
    }));
  const notJson = validBody.map((body) => ({
    label: "Content-Type: text/plain",
    request: send({ rawBody: JSON.stringify(body), contentType: "text/plain" }),
    judge: errorWith([400]),
  }));
  return fc.oneof(
    { weight: 2, arbitrary: missing },
    { weight: 4, arbitrary: wrongField },
    { weight: 2, arbitrary: extra },
    notObject,
    malformed,
    notJson,
    securityCases(op, world, (authorization) => ({
      ...send({ body: {} }),
      key: null,
      ...(authorization !== null ? { authorization } : {}),
    })),
  );
}

function queryParameter(op: Operation, name: string): Json {
  const parameter = op.parameters.find((candidate) => candidate.in === "query" && candidate.name === name);
  if (!parameter) throw new Error(`${op.operationId} has no query parameter ${name} in openapi.yaml`);
  return parameter.schema;
}

/** Query-string values (always strings) that the parameter's schema rejects. */
function invalidQueryValue(world: World, schema: Json): fc.Arbitrary<string> {
  const validate = world.arbitraries.validator(schema);
  return fc
    .oneof(fc.string({ unit: "grapheme", maxLength: 40 }), fc.constantFrom("", " ", "null", "%", "7d ", "24H"))
    .filter((value) => !validate(value));
}

function getCases(
  path: (value: string) => string,
  values: fc.Arbitrary<string>,
  world: World,
  judge: Case["judge"],
): fc.Arbitrary<Case> {
  return values.map((value) => ({
    label: path(value),
    request: { method: "GET", path: path(value), key: world.key },
    judge,
  }));
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

export type Definition = (op: Operation, world: World) => { invalid?: fc.Arbitrary<Case>; valid: fc.Arbitrary<Case> };

/**
 * An operation on one delivery by its path id (`/webhooks/deliveries/{delivery_id}` and `…/retry`):
 * any id names no delivery of this brand (a UUID never issued, or not a UUID at all), so 404.
 */
function deliveryIdCases(op: Operation, world: World, suffix: string): ReturnType<Definition> {
  const request = (id: string, authorization?: string | null): Request => ({
    method: op.method,
    path: `/webhooks/deliveries/${encodeURIComponent(wellFormed(id))}${suffix}`,
    key: authorization === undefined ? world.key : null,
    ...(authorization ? { authorization } : {}),
  });
  return {
    invalid: securityCases(op, world, (authorization) => request(world.streamIds[0]!, authorization)),
    valid: fc.oneof(fc.uuid(), notUuid).map((id) => ({
      label: `id ${JSON.stringify(id)}`,
      request: request(id),
      judge: errorWith([404], ["not_found"]),
    })),
  };
}

/** Each public operation's invalid and valid input. An operation missing here fails the run. */
export const PROPERTY_CASES: Record<string, Definition> = {
  getDiscovery: (_op, world) => ({
    valid: getCases((query) => `/${query}`, unknownParams.map(queryString), world, ok200),
  }),
  listCreators: (_op, world) => ({
    valid: unknownParams.map((params) => ({
      label: `/creators${queryString(params)}`,
      request: { method: "GET", path: `/creators${queryString(params)}` },
      judge: ok200,
    })),
  }),
  createStream: (op, world) => {
    const validBody = world.arbitraries.valid(op.requestSchema!, {
      creator_id: fc.constantFrom(...world.creatorIds),
    }) as fc.Arbitrary<Json>;
    return {
      invalid: bodyCases(op, world, validBody, op.fieldErrorCodes),
      valid: validBody.map((body) => ({
        label: JSON.stringify(body).slice(0, 100),
        request: { method: "POST", path: "/streams", key: world.key, body },
        judge: acceptedOrBusinessError,
      })),
    };
  },
  listStreams: (op, world) => {
    const { pageSize, offset } = world.contract.limits;
    const garbage = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 30 }),
      fc.constantFrom("1e3", "2.5", "-0", "0x10", "99999999999999999999999", "NaN", "[]"),
    );
    const anyParams = fc.array(fc.tuple(fc.constantFrom("limit", "offset", "status"), garbage), {
      minLength: 1,
      maxLength: 4,
    });
    const integers = fc.record(
      {
        limit: fc.integer({ min: -1_000, max: 1_000 }),
        offset: fc.integer({ min: -1_000, max: 1_000 }),
        status: world.arbitraries.valid(queryParameter(op, "status")) as fc.Arbitrary<string>,
      },
      { requiredKeys: [] },
    );
    return {
      // The contract: this operation never answers 400; bad values are clamped or defaulted.
      invalid: fc.oneof(
        anyParams.map((params) => ({
          label: `/streams${queryString(params)}`,
          request: { method: "GET", path: `/streams${queryString(params)}`, key: world.key },
          judge: ok200,
        })),
        securityCases(op, world, (authorization) => ({
          method: "GET",
          path: "/streams",
          key: null,
          ...(authorization !== null ? { authorization } : {}),
        })),
      ),
      valid: integers.map((params) => {
        const path = `/streams${queryString(Object.entries(params).map(([name, value]) => [name, String(value)]))}`;
        const judge = (exchange: Exchange) => {
          const expected = [
            params.limit === undefined ? pageSize.default : clamp(params.limit, pageSize.min, pageSize.max),
            params.offset === undefined ? offset.default : Math.max(offset.min, params.offset),
          ];
          if (exchange.status !== 200) return "expected 200";
          return exchange.body.limit === expected[0] && exchange.body.offset === expected[1]
            ? null
            : `expected limit, offset ${expected.join(", ")}`;
        };
        return { label: path, request: { method: "GET", path, key: world.key }, judge };
      }),
    };
  },
  getStream: (op, world) => streamIdCases(op, world),
  endStream: (op, world) => streamIdCases(op, world),
  getAnalytics: (op, world) => {
    const period = queryParameter(op, "period");
    const streamId = queryParameter(op, "stream_id");
    const invalidQuery = fc.oneof(
      invalidQueryValue(world, period).map((value) => queryString([["period", value]])),
      invalidQueryValue(world, streamId).map((value) => queryString([["stream_id", value]])),
      fc.constantFrom("?period=7d&period=24h", `?stream_id=${world.streamIds[0]}&stream_id=${world.streamIds[0]}`),
    );
    const validQuery = fc
      .record(
        {
          period: world.arbitraries.valid(period),
          stream_id: fc.oneof(fc.uuid(), fc.constantFrom(...world.streamIds)),
        },
        { requiredKeys: [] },
      )
      .map((params) => queryString(Object.entries(params).map(([name, value]) => [name, String(value)])));
    return {
      invalid: fc.oneof(
        getCases((query) => `/analytics${query}`, invalidQuery, world, errorWith([400], ["invalid_fields"])),
        securityCases(op, world, (authorization) => ({
          method: "GET",
          path: "/analytics",
          key: null,
          ...(authorization !== null ? { authorization } : {}),
        })),
      ),
      valid: getCases((query) => `/analytics${query}`, validQuery, world, ok200),
    };
  },
  createWebhook: (op, world) => {
    const validBody = world.arbitraries.valid(op.requestSchema!) as fc.Arbitrary<Json>;
    return {
      invalid: bodyCases(op, world, validBody, op.fieldErrorCodes),
      valid: validBody.map((body) => ({
        label: JSON.stringify(body).slice(0, 100),
        request: { method: "POST", path: "/webhooks", key: world.key, body },
        judge: acceptedOrBusinessError,
      })),
    };
  },
  listWebhooks: (op, world) => ({
    invalid: securityCases(op, world, (authorization) => ({
      method: "GET",
      path: "/webhooks",
      key: null,
      ...(authorization !== null ? { authorization } : {}),
    })),
    valid: getCases((query) => `/webhooks${query}`, unknownParams.map(queryString), world, ok200),
  }),
  deleteWebhook: (op, world) => {
    // Any non-empty id answers 200; an empty one counts as absent. One longer than the contract's
    // maxLength is cut to it (ending in "…") before validation, never refused, and echoed cut.
    const { webhookIdMaxLength } = world.contract.limits;
    const ids = fc.oneof(
      fc.uuid(),
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 60 }).filter((id) => id.trim() !== ""),
    );
    const echoed = (id: string) => {
      const characters = Array.from(id);
      return characters.length <= webhookIdMaxLength ? id : `${characters.slice(0, webhookIdMaxLength - 1).join("")}…`;
    };
    const request = (path: string, authorization?: string | null): Request => ({
      method: "DELETE",
      path,
      key: authorization === undefined ? world.key : null,
      ...(authorization ? { authorization } : {}),
    });
    return {
      invalid: fc.oneof(
        unknownParams.map((params) => ({
          label: `no id ${queryString(params)}`,
          request: request(`/webhooks${queryString(params)}`),
          judge: errorWith([400], ["missing_fields"]),
        })),
        securityCases(op, world, (authorization) => request(`/webhooks?id=${world.streamIds[0]}`, authorization)),
      ),
      valid: ids.map((id) => ({
        label: `id ${JSON.stringify(id)}`,
        request: request(`/webhooks${queryString([["id", id]])}`),
        judge: (exchange) =>
          exchange.status === 200 &&
          exchange.body.webhook_id === echoed(wellFormed(id)) &&
          exchange.body.deleted === true
            ? null
            : "expected 200 echoing the id",
      })),
    };
  },
  listWebhookDeliveries: (op, world) => {
    const streamId = queryParameter(op, "stream_id");
    const validQuery = fc
      .option(fc.oneof(fc.uuid(), fc.constantFrom(...world.streamIds)))
      .map((id) => queryString(id === null ? [] : [["stream_id", id]]));
    return {
      invalid: fc.oneof(
        getCases(
          (query) => `/webhooks/deliveries${query}`,
          invalidQueryValue(world, streamId).map((value) => queryString([["stream_id", value]])),
          world,
          errorWith([400], ["invalid_fields"]),
        ),
        securityCases(op, world, (authorization) => ({
          method: "GET",
          path: "/webhooks/deliveries",
          key: null,
          ...(authorization !== null ? { authorization } : {}),
        })),
      ),
      valid: getCases(
        (query) => `/webhooks/deliveries${query}`,
        validQuery,
        world,
        (exchange) =>
          exchange.status === 200 && Array.isArray(exchange.body?.deliveries) ? null : "expected 200 with deliveries",
      ),
    };
  },
  getWebhookDelivery: (op, world) => deliveryIdCases(op, world, ""),
  retryWebhookDelivery: (op, world) => deliveryIdCases(op, world, "/retry"),
  recoverWebhookDeliveries: (op, world) => {
    // Schema-valid and within the documented window (at most 7 days back, not in the future): a
    // webhook the brand does not have is 404, never a 400.
    const validBody = fc
      .tuple(fc.uuid(), fc.integer({ min: 60, max: 6 * 24 * 3600 }))
      .map(([webhookId, secondsBack]) => ({
        webhook_id: webhookId,
        since: new Date(world.serverTime.getTime() - secondsBack * 1000).toISOString(),
      }));
    return {
      invalid: fc.oneof(
        bodyCases(op, world, validBody, op.fieldErrorCodes),
        securityCases(op, world, (authorization) => ({
          method: "POST",
          path: "/webhooks/recover",
          key: null,
          body: { webhook_id: world.streamIds[0], since: new Date().toISOString() },
          ...(authorization !== null ? { authorization } : {}),
        })),
      ),
      valid: validBody.map((body) => ({
        label: JSON.stringify(body),
        request: { method: "POST", path: "/webhooks/recover", key: world.key, body },
        judge: acceptedOrBusinessError,
      })),
    };
  },
  listRequests: (op, world) => {
    // Filters the contract admits get a page; one that breaks a filter's pattern or enum is 400.
    const validQuery = fc
      .record(
        {
          status: fc.constantFrom("200", "404", "429", "2xx", "4xx", "5xx"),
          method: fc.constantFrom("GET", "POST", "DELETE"),
          path: fc.constantFrom("/streams", "/webhooks", "/webhooks/deliveries"),
          limit: fc.integer({ min: -5, max: 500 }).map(String),
        },
        { requiredKeys: [] },
      )
      .map((params) => queryString(Object.entries(params).map(([name, value]) => [name, String(value)])));
    const invalidQuery = fc.oneof(
      fc.constantFrom("?status=6xx", "?status=42", "?status=abc", "?method=get", "?method=TRACE"),
      fc.constantFrom("?path=streams", "?since=yesterday", "?starting_after=not-a-uuid"),
    );
    return {
      invalid: fc.oneof(
        getCases((query) => `/requests${query}`, invalidQuery, world, errorWith([400], ["invalid_fields"])),
        securityCases(op, world, (authorization) => ({
          method: "GET",
          path: "/requests",
          key: null,
          ...(authorization !== null ? { authorization } : {}),
        })),
      ),
      valid: getCases((query) => `/requests${query}`, validQuery, world, ok200),
    };
  },
  getRequest: (op, world) => {
    // Any id names no logged request of this brand's (well-formed or not): 404.
    const request = (id: string, authorization?: string | null): Request => ({
      method: "GET",
      path: `/requests/${encodeURIComponent(wellFormed(id))}`,
      key: authorization === undefined ? world.key : null,
      ...(authorization ? { authorization } : {}),
    });
    return {
      invalid: securityCases(op, world, (authorization) => request("req_conformance", authorization)),
      valid: fc
        .oneof(
          fc.uuid().map((id) => `req_${id.replace(/-/g, "")}`),
          notUuid,
        )
        .map((id) => ({
          label: `id ${JSON.stringify(id)}`,
          request: request(id),
          judge: errorWith([404], ["not_found"]),
        })),
    };
  },
  listenTestEvents: (op, world) => {
    const events = queryParameter(op, "events");
    const types = events.items.enum as string[];
    const validate = world.arbitraries.validator(events);
    const validEvents = (list: string[]): boolean => validate(list);
    const printable = fc.string({
      unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
      minLength: 1,
      maxLength: 40,
    });
    const badEvents = fc
      .array(fc.oneof(fc.constantFrom(...types), fc.string({ unit: "grapheme", maxLength: 16 })), {
        minLength: 1,
        maxLength: 4,
      })
      .filter((list) => !validEvents(list) && !list.every((type) => type === ""))
      .map((list) => `?events=${list.map((type) => encodeURIComponent(wellFormed(type))).join(",")}`);
    // Well-formed ids that name no event of the brand, and anything else a header can carry.
    const badLastEventId = fc.oneof(fc.stringMatching(/^evt_[0-9a-f]{32}$/), printable);
    const stream = (exchange: Exchange) =>
      exchange.status === 200 && (exchange.headers.get("content-type") ?? "").startsWith("text/event-stream")
        ? null
        : "expected 200 with an event stream";
    return {
      invalid: fc.oneof(
        badEvents.map((query) => ({
          label: `/webhooks/listen${query}`,
          request: { method: "GET", path: `/webhooks/listen${query}`, key: world.key },
          judge: errorWith([400], ["invalid_fields"]),
        })),
        badLastEventId.map((id) => ({
          label: `Last-Event-ID: ${id}`,
          request: { method: "GET", path: "/webhooks/listen", key: world.key, headers: { "last-event-id": id } },
          judge: errorWith([400], ["invalid_fields"]),
        })),
        securityCases(op, world, (authorization) => ({
          method: "GET",
          path: "/webhooks/listen",
          key: null,
          ...(authorization !== null ? { authorization } : {}),
        })),
      ),
      valid: fc
        .option(fc.subarray(types, { minLength: 1 }))
        .map((chosen) => (chosen === null ? "" : `?events=${chosen.join(",")}`))
        .map((query) => ({
          label: `/webhooks/listen${query}`,
          request: { method: "GET", path: `/webhooks/listen${query}`, key: world.key },
          judge: stream,
        })),
    };
  },
  getTestClock: (op, world) => ({
    invalid: securityCases(op, world, (authorization) => ({
      method: "GET",
      path: "/test-clock",
      key: null,
      ...(authorization !== null ? { authorization } : {}),
    })),
    valid: getCases((query) => `/test-clock${query}`, unknownParams.map(queryString), world, ok200),
  }),
  advanceTestClock: (op, world) => {
    // Any whole number of seconds from 1 to 7 days moves the world brand's test clock: 200.
    const validBody = world.arbitraries.valid(op.requestSchema!) as fc.Arbitrary<Json>;
    return {
      invalid: bodyCases(op, world, validBody, op.fieldErrorCodes),
      valid: validBody.map((body) => ({
        label: JSON.stringify(body),
        request: { method: "POST", path: "/test-clock/advance", key: world.key, body },
        judge: ok200,
      })),
    };
  },
};

/** GET and DELETE /streams/{id}: a value that is not a UUID is 404; a UUID is 200 or 404. */
function streamIdCases(op: Operation, world: World): ReturnType<Definition> {
  const at = (id: string) => `/streams/${encodeURIComponent(id)}`;
  return {
    invalid: fc.oneof(
      notUuid.map((id) => ({
        label: at(id),
        request: { method: op.method, path: at(id), key: world.key },
        judge: errorWith([404], ["not_found"]),
      })),
      securityCases(op, world, (authorization) => ({
        method: op.method,
        path: at(world.streamIds[0]!),
        key: null,
        ...(authorization !== null ? { authorization } : {}),
      })),
    ),
    valid: fc.oneof(fc.uuid(), fc.constantFrom(...world.streamIds)).map((id) => ({
      label: at(id),
      request: { method: op.method, path: at(id), key: world.key },
      judge: (exchange) =>
        exchange.status === 200 || exchange.body?.error?.code === "not_found" ? null : "expected 200 or 404 not_found",
    })),
  };
}

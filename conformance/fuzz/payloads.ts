/**
 * Request bodies, from the operation's schema in openapi.yaml (conformance/arbitraries.ts) and
 * from nothing at all: valid ones, fields of the wrong type or out of range, required fields
 * missing, JSON that is not an object, cut short or not JSON, nested deep, over the size limit,
 * bytes that are not UTF-8; each with the Content-Type it is sent with (or none).
 */
import fc from "fast-check";
import type { SchemaArbitraries } from "../arbitraries.ts";

type Json = Record<string, any>;

export interface Payload {
  label: string;
  body: Buffer | null;
  /** The Content-Type header, or null for none. */
  contentType: string | null;
  /** Over the body limit: refused by the transport on any path (400 invalid_fields), see FuzzCase. */
  transport?: boolean;
}

/** The JSON body limit (server/http/pipeline.ts); bodies are generated on both sides of it. */
const BODY_LIMIT_BYTES = 1024 * 1024;

const JSON_TYPE = "application/json";

/** Content types a client gets wrong, and spellings of JSON's a server might not recognise. */
const CONTENT_TYPES = fc.constantFrom(
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=fuzz",
  "application/xml",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "application/json; charset=utf-8",
  'application/json; charset="UTF-8"',
  "APPLICATION/JSON",
  "application/merge-patch+json",
  "application/vnd.api+json",
  "application/json, text/plain",
  "application/json;;;",
  "*/*",
  "",
  "json",
);

const PROTOTYPE_NAMES = fc.constantFrom("__proto__", "constructor", "toString", "valueOf", "hasOwnProperty");

const text = (value: string) => Buffer.from(value, "utf8");
const asJson = (value: unknown) => text(JSON.stringify(value));
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Arrays or objects nested `depth` deep: cheap to send, costly to a recursive reader. */
const nested = fc.tuple(fc.integer({ min: 500, max: 150_000 }), fc.boolean()).map(
  ([depth, arrays]): Payload => ({
    label: `${arrays ? "arrays" : "objects"} nested ${depth} deep`,
    body: text(arrays ? `${"[".repeat(depth)}${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`),
    contentType: JSON_TYPE,
  }),
);

/** Bytes that are not UTF-8 JSON: a BOM first, invalid UTF-8, NUL bytes, UTF-16. */
const notUtf8 = fc
  .constantFrom(
    ["a byte-order mark before the JSON", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), text('{"a":1}')])],
    ["invalid UTF-8 inside a string", Buffer.concat([text('{"a":"'), Buffer.from([0xc3, 0x28, 0xff]), text('"}')])],
    ["NUL bytes", Buffer.from([0x7b, 0x00, 0x00, 0x7d])],
    ["UTF-16 JSON", Buffer.from('{"a":1}', "utf16le")],
    ["random bytes", Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03])],
  )
  .map(([label, body]): Payload => ({ label: label as string, body: body as Buffer, contentType: JSON_TYPE }));

/** Just over the limit, or a field that alone is near it (under the limit, over any maxLength). */
const huge = fc.constantFrom(BODY_LIMIT_BYTES + 1, BODY_LIMIT_BYTES - 64).map(
  (size): Payload => ({
    label: `a ${size}-byte body`,
    body: text(`{"a":"${"x".repeat(size - 8)}"}`),
    contentType: JSON_TYPE,
    transport: size > BODY_LIMIT_BYTES,
  }),
);

/** JSON text cut somewhere inside, so it no longer parses. */
function truncated(values: fc.Arbitrary<unknown>): fc.Arbitrary<Payload> {
  return fc
    .tuple(values, fc.nat())
    .map(([value, cut]) => {
      const whole = JSON.stringify(value) ?? "null";
      return whole.slice(0, cut % Math.max(1, whole.length));
    })
    .filter((cut) => {
      try {
        JSON.parse(cut);
        return false;
      } catch {
        return true;
      }
    })
    .map((cut) => ({ label: `JSON cut short: ${cut.slice(0, 40)}`, body: text(cut), contentType: JSON_TYPE }));
}

/** Bodies for an operation whose request body is `schema` (null: it takes none, and gets one anyway). */
export function payloads(
  arbitraries: SchemaArbitraries,
  schema: Json | null,
  valid: fc.Arbitrary<unknown>,
): fc.Arbitrary<Payload> {
  const properties = Object.keys(schema?.properties ?? {});
  const required: string[] = schema?.required ?? [];
  const json =
    (label: string) =>
    (value: unknown): Payload => ({
      label: `${label} ${JSON.stringify(value)?.slice(0, 60)}`,
      body: asJson(value),
      contentType: JSON_TYPE,
    });
  const shaped: fc.Arbitrary<Payload>[] = [];
  if (schema && properties.length) {
    shaped.push(
      fc
        .constantFrom(...properties)
        .chain((field) => fc.tuple(fc.constant(field), valid, arbitraries.invalid(schema.properties[field])))
        .map(([field, body, value]) => json(`${field} invalid:`)({ ...(isObject(body) ? body : {}), [field]: value })),
      fc.tuple(valid, PROTOTYPE_NAMES, fc.jsonValue({ maxDepth: 2 })).map(([body, name, value]) => ({
        label: `field ${name}`,
        // JSON.stringify drops a `__proto__` key set by assignment; written by hand it reaches the server.
        body: text(
          `{"${name}":${JSON.stringify(value) ?? "null"},${JSON.stringify(isObject(body) ? body : {}).slice(1)}`.replace(
            /,}$/,
            "}",
          ),
        ),
        contentType: JSON_TYPE,
      })),
    );
  }
  if (required.length) {
    shaped.push(
      fc.tuple(valid, fc.constantFrom(...required)).map(([body, field]) => {
        const { [field]: _dropped, ...rest } = isObject(body) ? body : {};
        return json(`without ${field}:`)(rest);
      }),
    );
  }
  return fc.oneof(
    { weight: 4, arbitrary: valid.map(json("valid:")) },
    { weight: 4, arbitrary: shaped.length ? fc.oneof(...shaped) : valid.map(json("valid:")) },
    { weight: 2, arbitrary: fc.constant<Payload>({ label: "no body", body: null, contentType: null }) },
    fc.constantFrom<Payload>(
      { label: "no body, JSON type", body: null, contentType: JSON_TYPE },
      { label: "empty body", body: Buffer.alloc(0), contentType: JSON_TYPE },
    ),
    fc
      .oneof(
        fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
        fc.string(),
        fc.double(),
        fc.boolean(),
        fc.constant(null),
      )
      .map(json("not an object:")),
    { weight: 2, arbitrary: truncated(valid) },
    fc
      .tuple(valid, CONTENT_TYPES)
      .map(([body, contentType]) => ({ label: `Content-Type: ${contentType}`, body: asJson(body), contentType })),
    fc.jsonValue({ maxDepth: 4 }).map(json("any JSON:")),
    nested,
    notUtf8,
    huge,
  );
}

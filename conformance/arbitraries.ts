/**
 * fast-check arbitraries read from the JSON Schemas of openapi.yaml: values a schema accepts,
 * and values it rejects. Every invalid value is checked against the schema itself (ajv), so a
 * mutation that happens to stay valid is thrown away rather than blamed on the server.
 */
import fc from "fast-check";
import type { ValidateFunction } from "../contract/schemas.ts";
import type { Contract } from "./contract.ts";

type Json = Record<string, any>;

/** Strings a careless server mishandles: NUL, a lone surrogate, SQL and HTML fragments. */
const NASTY = fc.constantFrom("\u0000", "\ud800", "'; DROP TABLE streams;--", "<script>", "💥🔥", " ", "%00", "\\");

export class SchemaArbitraries {
  readonly #validators = new WeakMap<Json, ValidateFunction>();
  private readonly contract: Contract;

  constructor(contract: Contract) {
    this.contract = contract;
  }

  validator(schema: Json): ValidateFunction {
    let validate = this.#validators.get(schema);
    if (!validate) {
      validate = this.contract.compile(schema);
      this.#validators.set(schema, validate);
    }
    return validate;
  }

  /**
   * Values `schema` accepts. `hints` add likely-real values for top-level properties. The few a
   * generator gets wrong (a URL over `maxLength`) are dropped by checking them against the schema.
   */
  valid(schema: Json, hints: Record<string, fc.Arbitrary<unknown>> = {}): fc.Arbitrary<unknown> {
    const validate = this.validator(schema);
    return this.generate(schema, hints).filter((value) => validate(value));
  }

  private generate(schema: Json, hints: Record<string, fc.Arbitrary<unknown>> = {}): fc.Arbitrary<unknown> {
    if (schema.const !== undefined) return fc.constant(schema.const);
    if (schema.enum) return fc.constantFrom(...schema.enum);
    if (Array.isArray(schema.type))
      return fc.oneof(...schema.type.map((type: string) => this.generate({ ...schema, type })));
    switch (schema.type) {
      case "string":
        return this.validString(schema);
      case "integer":
        return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
      case "number":
        return fc.double({
          min: schema.minimum ?? -1e6,
          max: schema.maximum ?? 1e6,
          noNaN: true,
          noDefaultInfinity: true,
        });
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      case "array": {
        const items = this.generate(schema.items ?? {});
        const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, 5) };
        return schema.uniqueItems
          ? fc.uniqueArray(items, { ...constraints, selector: (item) => JSON.stringify(item) })
          : fc.array(items, constraints);
      }
      case "object": {
        const properties = Object.fromEntries(
          Object.entries<Json>(schema.properties ?? {}).map(([name, property]) => {
            const hint = hints[name];
            return [name, hint ? fc.oneof(hint, this.generate(property)) : this.generate(property)];
          }),
        );
        return fc.record(properties, { requiredKeys: schema.required ?? [] });
      }
      default:
        return fc.jsonValue();
    }
  }

  private validString(s: Json): fc.Arbitrary<string> {
    if (s.format === "uuid") return fc.uuid();
    if (s.format === "uri")
      return fc.oneof({ weight: 3, arbitrary: fc.webUrl({ validSchemes: ["https"] }) }, fc.webUrl());
    if (s.format === "date-time") return fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
    // Random text is almost never an email: filtering it would never end.
    if (s.format === "email") return fc.emailAddress();
    const minLength = s.minLength ?? 0;
    const maxLength = s.maxLength ?? 64;
    const short = fc.string({ unit: "grapheme", minLength, maxLength: Math.min(maxLength, 40) });
    const longest = fc.constant("x".repeat(maxLength));
    const pattern = s.pattern === undefined ? null : new RegExp(s.pattern, "u");
    const fits = (value: string) =>
      [...value].length >= minLength && [...value].length <= maxLength && (!pattern || pattern.test(value));
    // A pattern that random text rarely meets still gets values from the pattern itself.
    const matching = pattern ? [fc.stringMatching(pattern)] : [];
    return fc.oneof({ weight: 6, arbitrary: short }, NASTY, longest, ...matching).filter(fits);
  }

  /** Values `schema` rejects: another JSON type, out of range, not in the enum, not the format. */
  invalid(schema: Json): fc.Arbitrary<unknown> {
    const candidates: fc.Arbitrary<unknown>[] = [
      fc.oneof(
        fc.integer(),
        fc.string(),
        fc.boolean(),
        fc.constant(null),
        fc.array(fc.integer(), { maxLength: 3 }),
        fc.object({ maxDepth: 1 }),
      ),
    ];
    if (schema.maxLength !== undefined)
      candidates.push(fc.integer({ min: 1, max: 20 }).map((extra) => "y".repeat(schema.maxLength + extra)));
    if (schema.minLength) candidates.push(fc.constant(""));
    if (schema.maximum !== undefined)
      candidates.push(fc.integer({ min: schema.maximum + 1, max: schema.maximum + 1_000_000 }));
    if (schema.minimum !== undefined)
      candidates.push(fc.integer({ min: schema.minimum - 1_000_000, max: schema.minimum - 1 }));
    if (schema.type === "integer")
      candidates.push(fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Number.isInteger(value)));
    if (schema.enum || schema.format) candidates.push(fc.string({ maxLength: 20 }));
    if (schema.pattern) candidates.push(NASTY);
    if (schema.type === "array") {
      candidates.push(
        fc.constant([]),
        this.valid(schema.items ?? {}).map((item) => [item, item]),
        this.invalid(schema.items ?? {}).map((item) => [item]),
      );
    }
    const validate = this.validator(schema);
    return fc.oneof(...candidates).filter((value) => !validate(value));
  }
}

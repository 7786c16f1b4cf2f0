/**
 * fast-check arbitraries read from the JSON Schemas of openapi.yaml: values a schema accepts,
 * and values it rejects. Every invalid value is checked against the schema itself (ajv), so a
 * mutation that happens to stay valid is thrown away rather than blamed on the server.
 */
import fc from "fast-check";
import type { ValidateFunction } from "ajv/dist/2020.js";
import type { Contract } from "./contract.ts";

type Json = Record<string, any>;

/** Strings a careless server mishandles: NUL, a lone surrogate, SQL and HTML fragments. */
const NASTY = fc.constantFrom("\u0000", "\ud800", "'; DROP TABLE streams;--", "<script>", "💥🔥", " ", "%00", "\\");

export class SchemaArbitraries {
  readonly #validators = new WeakMap<Json, ValidateFunction>();

  constructor(private readonly contract: Contract) {}

  validator(schema: Json): ValidateFunction {
    let validate = this.#validators.get(schema);
    if (!validate) this.#validators.set(schema, (validate = this.contract.compile(schema)));
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
    const s = this.contract.resolve<Json>(schema);
    if (s.const !== undefined) return fc.constant(s.const);
    if (s.enum) return fc.constantFrom(...s.enum);
    if (Array.isArray(s.type)) return fc.oneof(...s.type.map((type: string) => this.generate({ ...s, type })));
    switch (s.type) {
      case "string":
        return this.validString(s);
      case "integer":
        return fc.integer({ min: s.minimum ?? -1_000_000, max: s.maximum ?? 1_000_000 });
      case "number":
        return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      case "array": {
        const items = this.generate(s.items ?? {});
        const constraints = { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 5, 5) };
        return s.uniqueItems ? fc.uniqueArray(items, { ...constraints, selector: (item) => JSON.stringify(item) }) : fc.array(items, constraints);
      }
      case "object": {
        const properties = Object.fromEntries(
          Object.entries<Json>(s.properties ?? {}).map(([name, property]) => {
            const hint = hints[name];
            return [name, hint ? fc.oneof(hint, this.generate(property)) : this.generate(property)];
          }),
        );
        return fc.record(properties, { requiredKeys: s.required ?? [] });
      }
      default:
        return fc.jsonValue();
    }
  }

  private validString(s: Json): fc.Arbitrary<string> {
    if (s.format === "uuid") return fc.uuid();
    if (s.format === "uri") return fc.oneof({ weight: 3, arbitrary: fc.webUrl({ validSchemes: ["https"] }) }, fc.webUrl());
    if (s.format === "date-time") return fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
    const minLength = s.minLength ?? 0;
    const maxLength = s.maxLength ?? 64;
    const short = fc.string({ unit: "grapheme", minLength, maxLength: Math.min(maxLength, 40) });
    const longest = fc.constant("x".repeat(maxLength));
    const pattern = s.pattern === undefined ? null : new RegExp(s.pattern, "u");
    const fits = (value: string) => [...value].length >= minLength && [...value].length <= maxLength && (!pattern || pattern.test(value));
    // A pattern that random text rarely meets still gets values from the pattern itself.
    const matching = pattern ? [fc.stringMatching(pattern)] : [];
    return fc.oneof({ weight: 6, arbitrary: short }, NASTY, longest, ...matching).filter(fits);
  }

  /** Values `schema` rejects: another JSON type, out of range, not in the enum, not the format. */
  invalid(schema: Json): fc.Arbitrary<unknown> {
    const s = this.contract.resolve<Json>(schema);
    const candidates: fc.Arbitrary<unknown>[] = [fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }), fc.object({ maxDepth: 1 }))];
    if (s.maxLength !== undefined) candidates.push(fc.integer({ min: 1, max: 20 }).map((extra) => "y".repeat(s.maxLength + extra)));
    if (s.minLength) candidates.push(fc.constant(""));
    if (s.maximum !== undefined) candidates.push(fc.integer({ min: s.maximum + 1, max: s.maximum + 1_000_000 }));
    if (s.minimum !== undefined) candidates.push(fc.integer({ min: s.minimum - 1_000_000, max: s.minimum - 1 }));
    if (s.type === "integer") candidates.push(fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Number.isInteger(value)));
    if (s.enum || s.format) candidates.push(fc.string({ maxLength: 20 }));
    if (s.pattern) candidates.push(NASTY);
    if (s.type === "array") {
      candidates.push(fc.constant([]), this.valid(s.items ?? {}).map((item) => [item, item]), this.invalid(s.items ?? {}).map((item) => [item]));
    }
    const validate = this.validator(schema);
    return fc.oneof(...candidates).filter((value) => !validate(value));
  }
}

import { describe, expect, it } from "vitest";
import { compileSchema, describeSchemaErrors, type SchemaInput } from "./schemas.ts";

const INPUTS: SchemaInput[] = ["parameters", "body", "value"];

describe("the one schema compiler", () => {
  it.each(INPUTS)("refuses a date-time on a day that does not exist (%s)", (input) => {
    const validate = compileSchema({ type: "string", format: "date-time" }, input);
    expect(validate("2026-02-28T00:00:00Z")).toBe(true);
    expect(validate("2024-02-29T23:59:59.999+01:00")).toBe(true);
    expect(validate("2026-02-31T00:00:00Z")).toBe(false);
    expect(validate("2026-02-28T00:00:00")).toBe(false);
    expect(describeSchemaErrors(validate.errors)).toBe('/ must match format "date-time"');
  });

  it.each(INPUTS)("checks uri as 1.3.0 did: a scheme and no white space (%s)", (input) => {
    const validate = compileSchema({ type: "string", format: "uri" }, input);
    for (const url of [
      "https://h.example/a|b",
      "https://h.example/ü",
      "https://h.example/a{b}",
      "https://h.example/%zz",
    ])
      expect(validate(url)).toBe(true);
    expect(validate("h.example/no-scheme")).toBe(false);
    expect(validate("https://h.example/a b")).toBe(false);
  });

  it.each(INPUTS)("holds int32 and int64 to their bounds, with no maximum in the schema (%s)", (input) => {
    const int64 = compileSchema({ type: "integer", format: "int64" }, input);
    expect(int64(2 ** 53 - 1)).toBe(true);
    expect(int64(2 ** 70)).toBe(false);
    expect(int64(-(2 ** 70))).toBe(false);
    const int32 = compileSchema({ type: "integer", format: "int32" }, input);
    expect(int32(2 ** 31 - 1)).toBe(true);
    expect(int32(2 ** 31)).toBe(false);
  });

  it("coerces parameters from text, fills defaults in parameters and bodies, and leaves values as they are", () => {
    const schema = {
      type: "object",
      properties: { limit: { type: "integer", default: 20 }, offset: { type: "integer" } },
    };
    const parameters = { offset: "5" };
    expect(compileSchema(schema, "parameters")(parameters)).toBe(true);
    expect(parameters).toEqual({ offset: 5, limit: 20 });
    const body = { offset: 5 };
    expect(compileSchema(schema, "body")(body)).toBe(true);
    expect(body).toEqual({ offset: 5, limit: 20 });
    const value = { offset: "5" };
    expect(compileSchema(schema)(value)).toBe(false);
    expect(value).toEqual({ offset: "5" });
  });
});

// Every example in the contract is real-shaped (issue 34: the served /docs showed a creator id
// `crt_9f2c41`, while creator ids are `avt_` and 12 characters): each JSON example, each
// parameter example and each event of an event-stream example validates against its schema,
// whose patterns say what an id looks like. The /docs page and its samples are made from these.
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { CONTRACT_FILE } from "./files.ts";

type Json = Record<string, any>;
const doc = load(readFileSync(CONTRACT_FILE, "utf8")) as Json;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
addFormats.default(ajv);
for (const name of ["int32", "int64", "float", "double"]) ajv.addFormat(name, { type: "number", validate: () => true });
ajv.addSchema(doc, "contract");

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
const resolve = (value: Json): Json =>
  typeof value?.$ref === "string"
    ? resolve(
        value.$ref
          .slice(2)
          .split("/")
          .reduce((node: Json, key: string) => node[key.replace(/~1/g, "/").replace(/~0/g, "~")], doc),
      )
    : value;

interface Example {
  where: string;
  schemaRef: string;
  value: unknown;
}

function examples(): Example[] {
  const found: Example[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      if (typeof operation !== "object" || !operation.responses) continue;
      const at = `${method.toUpperCase()} ${path}`;
      operation.parameters?.forEach((raw: Json, index: number) => {
        const parameter = resolve(raw);
        const schemaRef = `contract#/paths/${pointer(path, method, "parameters", String(index))}${raw.$ref ? "" : "/schema"}`;
        const ref = raw.$ref ? `contract#${raw.$ref.slice(1)}/schema` : schemaRef;
        if (parameter.example !== undefined)
          found.push({ where: `${at} parameter ${parameter.name}`, schemaRef: ref, value: parameter.example });
      });
      const bodies: [string, Json][] = [];
      if (operation.requestBody) bodies.push(["request", resolve(operation.requestBody)]);
      for (const [status, response] of Object.entries<Json>(operation.responses))
        bodies.push([status, resolve(response)]);
      for (const [label, body] of bodies) {
        for (const [type, media] of Object.entries<Json>(body.content ?? {})) {
          for (const [name, rawExample] of Object.entries<Json>(media.examples ?? {})) {
            const example = resolve(rawExample);
            if (type === "application/json" && media.schema) {
              const schemaRef = media.schema.$ref ? `contract${media.schema.$ref}` : undefined;
              if (schemaRef) found.push({ where: `${at} ${label} example ${name}`, schemaRef, value: example.value });
            } else if (type === "text/event-stream" && typeof example.value === "string") {
              for (const line of example.value.split("\n").filter((line: string) => line.startsWith("data: "))) {
                found.push({
                  where: `${at} ${label} event-stream example ${name}`,
                  schemaRef: "contract#/components/schemas/WebhookEvent",
                  value: JSON.parse(line.slice(6)),
                });
              }
            }
          }
        }
      }
    }
  }
  return found;
}

describe("the contract's examples", () => {
  const all = examples();

  it("include the event-stream examples and the parameters' examples", () => {
    expect(all.some((example) => example.where.includes("event-stream example"))).toBe(true);
    expect(all.some((example) => example.where.includes("parameter"))).toBe(true);
  });

  it("each validate against their schema: every id has its pattern's shape", () => {
    const invalid = all.flatMap(({ where, schemaRef, value }) => {
      const validate = ajv.getSchema(schemaRef) ?? ajv.compile({ $ref: schemaRef });
      return validate(value) ? [] : [`${where}: ${ajv.errorsText(validate.errors)}`];
    });
    expect(invalid).toEqual([]);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadContract } from "./contract.ts";
import { CONTRACT_FILE, parseYamlText, readContract, toYamlText } from "./load.ts";

const contract = await loadContract();
/** openapi.yaml's text as YAML, to check the loaded contract against what is written. */
const written = parseYamlText(readFileSync(CONTRACT_FILE, "utf8")) as Record<string, any>;

const scratch = mkdtempSync(join(tmpdir(), "contract-load-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** openapi.yaml with `edit` applied, written to a file of its own. */
function editedContract(name: string, edit: (doc: Record<string, any>) => void): string {
  const doc = structuredClone(written);
  edit(doc);
  const file = join(scratch, `${name}.yaml`);
  writeFileSync(file, toYamlText(doc));
  return file;
}

describe("loadContract", () => {
  it("reads openapi.yaml as written: refs local in the document, resolved in the dereferenced one", () => {
    expect(contract.document).toEqual(written);
    expect(contract.version).toBe(written.info.version);
    expect(JSON.stringify(contract.dereferenced)).not.toContain('"$ref"');
  });

  it("reads each file once per process, and hands out a frozen contract every reader shares", async () => {
    expect(await loadContract()).toBe(contract);
    expect(Object.isFrozen(contract.document.paths["/streams"].get)).toBe(true);
    expect(Object.isFrozen(contract.dereferenced.components.schemas.StreamList.properties.limit)).toBe(true);
  });

  it("names the file and the place of a $ref it cannot resolve", async () => {
    const broken = editedContract(
      "broken-ref",
      (doc) =>
        (doc.paths["/streams/{id}"].get.responses["200"].content["application/json"].schema = {
          $ref: "#/components/schemas/Missing",
        }),
    );
    await expect(loadContract(broken)).rejects.toThrow(
      /broken-ref\.yaml: Can't resolve \$ref at #\/paths\/~1streams~1\{id\}\/get/,
    );
  });

  it("names the file of YAML it cannot parse", async () => {
    const file = join(scratch, "not-yaml.yaml");
    writeFileSync(file, "openapi: 3.1.0\ninfo: [\n");
    await expect(loadContract(file)).rejects.toThrow(/not-yaml\.yaml: cannot read the contract/);
  });

  it("refuses an operator path that is not served under /admin/v1, which the guard would treat as public", async () => {
    const file = editedContract("admin-served-public", (doc) => delete doc.paths["/brands"].servers);
    await expect(loadContract(file)).rejects.toThrow(
      /path \/brands is x-internal but does not name a server under \/admin\/v1/,
    );
  });

  it("reads the published view without the operator API", async () => {
    const published = await readContract(CONTRACT_FILE, "published");
    expect(Object.keys(published.paths)).toEqual(
      Object.keys(written.paths).filter((path) => written.paths[path]["x-internal"] !== true),
    );
  });
});

describe("the operation index", () => {
  const { operations } = contract;
  const writtenOperations = Object.entries<Record<string, any>>(written.paths).flatMap(([path, item]) =>
    ["get", "post", "put", "patch", "delete"]
      .filter((method) => item[method])
      .map((method) => ({
        path,
        method,
        operation: item[method],
        base: new URL(item.servers?.[0]?.url ?? "http://localhost/api/v1").pathname,
      })),
  );

  it("has every operation of the contract's paths, once, with its scope, statuses and served path", () => {
    expect(operations.all.map((operation) => operation.operationId)).toEqual(
      writtenOperations.map(({ operation }) => operation.operationId),
    );
    for (const { path, method, operation, base } of writtenOperations) {
      const indexed = operations.byId(operation.operationId);
      expect(indexed).toMatchObject({
        method: method.toUpperCase(),
        path,
        admin: base === "/admin/v1",
        dashboard: base === "/dashboard/api/v1",
        scope: operation["x-required-scope"] ?? null,
      });
      expect(indexed.servedPath).toBe(`${base}${path}`);
      expect([...indexed.statuses]).toEqual(Object.keys(operation.responses).map(Number));
      expect(Object.fromEntries(indexed.fieldErrorCodes)).toEqual(operation["x-field-error-codes"] ?? {});
    }
  });

  it("holds the request and response schemas resolved", () => {
    const createStream = operations.byId("createStream");
    expect(createStream.requestSchema).toEqual(contract.dereferenced.components.schemas.StreamCreate);
    expect(createStream.responses.get(201)?.content["application/json"].schema).toEqual(
      contract.dereferenced.components.schemas.StreamCreated,
    );
    expect(operations.byId("getStream").parameters.map((parameter) => parameter.name)).toEqual(["id"]);
  });

  it("finds the operation a served path names, and only that", () => {
    expect(operations.find("GET", "/api/v1")?.operationId).toBe("getDiscovery");
    expect(operations.find("GET", "/api/v1/")?.operationId).toBe("getDiscovery");
    expect(operations.find("DELETE", "/api/v1/streams/7c9e6679-7425-40de-944b-e07fc1f90ae7")?.operationId).toBe(
      "endStream",
    );
    expect(operations.find("GET", "/admin/v1/brands")?.operationId).toBe("adminListBrands");
    expect(operations.find("GET", "/api/v1/brands")).toBeUndefined();
    expect(operations.find("PUT", "/api/v1/streams")).toBeUndefined();
    expect(operations.find("GET", "/api/v1/streams/a/b")).toBeUndefined();
  });

  it("tells a path that names an operation only in another letter case", () => {
    expect(operations.isMiscased("/API/v1/Streams")).toBe(true);
    expect(operations.isMiscased("/api/v1/streams")).toBe(false);
    expect(operations.isMiscased("/api/v1/nothing")).toBe(false);
  });

  it("refuses an operationId it does not have, by name", () => {
    expect(() => operations.byId("listBrands")).toThrow(/no operation listBrands/);
  });
});

describe("the limits", () => {
  const schemas = written.components.schemas;
  const parameters = (path: string, method: string) =>
    written.paths[path][method].parameters as Array<Record<string, any>>;
  const schemaOf = (path: string, method: string, name: string) =>
    parameters(path, method).find((parameter) => parameter.name === name)!.schema;

  it("are the values openapi.yaml states", () => {
    expect(contract.limits.pageSize).toEqual({
      min: schemas.StreamList.properties.limit.minimum,
      max: schemas.StreamList.properties.limit.maximum,
      default: schemaOf("/streams", "get", "limit").default,
    });
    expect(contract.limits.offset).toEqual({
      min: schemas.StreamList.properties.offset.minimum,
      max: schemas.StreamList.properties.offset.maximum,
      default: schemaOf("/streams", "get", "offset").default,
    });
    expect(contract.limits.statusFilterMaxLength).toBe(schemaOf("/streams", "get", "status").maxLength);
    expect(contract.limits.webhookIdMaxLength).toBe(schemaOf("/webhooks", "delete", "id").maxLength);
    expect(contract.limits.errorMessageMaxLength).toBe(schemas.Error.properties.error.properties.message.maxLength);
    expect(contract.limits.deliveryErrorMaxLength).toBe(schemas.WebhookDelivery.properties.error.maxLength);
    expect(contract.limits.durationMinutes).toEqual({
      min: schemas.StreamCreate.properties.duration_minutes.minimum,
      max: schemas.StreamCreate.properties.duration_minutes.maximum,
    });
    expect(contract.limits.periods).toEqual({
      values: schemaOf("/analytics", "get", "period").enum,
      default: schemaOf("/analytics", "get", "period").default,
    });
    expect(contract.limits.apiKeyPattern.source).toBe(schemas.KeyCreated.properties.key.pattern);
    expect(contract.limits.passwordMaxLength).toBe(schemas.DashboardInvitationAccept.properties.password.maxLength);
  });

  it("state the range GET /streams clamps to, which is what the contract states for its parameters", () => {
    for (const name of ["limit", "offset"] as const) {
      const answered = schemas.StreamList.properties[name];
      expect(schemaOf("/streams", "get", name)).toMatchObject({
        minimum: answered.minimum,
        maximum: answered.maximum,
        format: answered.format,
      });
    }
  });

  it("give every error message the same bound", () => {
    const messages = Object.entries<Record<string, any>>(schemas)
      .map(
        ([name, schema]) =>
          [name, (schema.properties?.error?.properties?.message ?? null) as Record<string, any> | null] as const,
      )
      .filter(([, message]) => message !== null);
    expect(messages.length).toBeGreaterThan(10);
    for (const [name, message] of messages)
      expect(message?.maxLength, name).toBe(contract.limits.errorMessageMaxLength);
  });

  it("are what the product spec says today", () => {
    expect(contract.limits).toMatchObject({
      pageSize: { min: 1, max: 100, default: 20 },
      offset: { min: 0, default: 0 },
      durationMinutes: { min: 1, max: 480 },
      periods: { values: ["24h", "7d", "30d"], default: "7d" },
    });
    expect(contract.limits.apiKeyPattern.test(`svc_live_${"A1b2".repeat(8)}`)).toBe(true);
    expect(contract.limits.apiKeyPattern.test(`svc_prod_${"A1b2".repeat(8)}`)).toBe(false);
  });

  it("are refused by name when the contract stops stating one", async () => {
    const file = editedContract(
      "no-duration-maximum",
      (doc) => delete doc.components.schemas.StreamCreate.properties.duration_minutes.maximum,
    );
    await expect(loadContract(file)).rejects.toThrow(/no longer states StreamCreate duration_minutes maximum/);
  });

  it("are refused when the password fields state different bounds", async () => {
    const file = editedContract("password-bounds-apart", (doc) => {
      doc.components.schemas.DashboardPasswordChange.properties.new_password.maxLength = 1000;
    });
    await expect(loadContract(file)).rejects.toThrow(
      /password fields must state one maxLength: .*dashboardChangePassword new_password 1000/,
    );
  });
});

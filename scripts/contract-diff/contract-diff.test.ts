import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parseYamlText, toYamlText } from "../../contract/load.ts";
import { latestRelease, run } from "./cli.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const RELEASED = latestRelease();
const scratch = mkdtempSync(join(tmpdir(), "contract-diff-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Doc = Record<string, any>;
let edits = 0;

/** A copy of the released contract with `edit` applied, written to the scratch directory. */
function editedContract(edit: (doc: Doc) => void): string {
  const doc = parseYamlText(readFileSync(RELEASED, "utf8")) as Doc;
  edit(doc);
  const file = join(scratch, `edit-${(edits += 1)}.yaml`);
  writeFileSync(file, toYamlText(doc));
  return file;
}

async function diff(revision: string, base = RELEASED): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const code = await run(["--base", base, "--revision", revision], (line) => lines.push(line));
  return { code, output: lines.join("\n") };
}

const schemas = (doc: Doc) => doc.components.schemas;
const without = (list: string[], value: string) => list.filter((item) => item !== value);

// Each edit, the operation it shows up on and the line the gate must print for it.
const BREAKING: Array<[string, (doc: Doc) => void, RegExp]> = [
  ["an operation removed", (doc) => delete doc.paths["/streams/{id}"].delete, /^BREAKING {2}DELETE \/streams\/\{id\} {2}\/paths\/~1streams~1\{id\}\/delete: operation removed$/m],
  [
    "a response field removed",
    (doc) => {
      delete schemas(doc).StreamDetail.properties.room_name;
      schemas(doc).StreamDetail.required = without(schemas(doc).StreamDetail.required, "room_name");
    },
    /^BREAKING {2}GET \/streams\/\{id\} {2}\/paths\/~1streams~1\{id\}\/get\/responses\/200\/content\/application~1json\/schema\/properties\/room_name: response field room_name removed$/m,
  ],
  ["a response enum value removed", (doc) => (schemas(doc).StreamStatus.enum = ["preparing", "live", "ended"]), /^BREAKING {2}GET \/streams\/\{id\} {2}\S+\/schema\/properties\/status\/enum: enum value "error" removed \(response\)$/m],
  [
    "a required request field added",
    (doc) => {
      schemas(doc).StreamCreate.properties.language = { type: "string" };
      schemas(doc).StreamCreate.required.push("language");
    },
    /^BREAKING {2}POST \/streams {2}\/paths\/~1streams\/post\/requestBody\/content\/application~1json\/schema\/properties\/language: required request field language added \(request\)$/m,
  ],
  ["a request maxLength narrowed", (doc) => (schemas(doc).StreamCreate.properties.product_name.maxLength = 100), /^BREAKING {2}POST \/streams {2}\S+\/properties\/product_name\/maxLength: maxLength lowered from 200 to 100 \(request\)$/m],
  ["a request maximum narrowed", (doc) => (schemas(doc).StreamCreate.properties.duration_minutes.maximum = 240), /^BREAKING {2}POST \/streams {2}\S+\/properties\/duration_minutes\/maximum: maximum lowered from 480 to 240 \(request\)$/m],
  ["a request pattern changed", (doc) => (schemas(doc).StreamCreate.properties.creator_id.pattern = "^avt_[A-Za-z0-9]{12}$"), /^BREAKING {2}POST \/streams {2}\S+\/properties\/creator_id\/pattern: pattern changed from "\^\[\^\\\\x00\]\*\$" to "\^avt_\[A-Za-z0-9\]\{12\}\$" \(request\)$/m],
  ["a parameter's default changed", (doc) => (doc.paths["/streams"].get.parameters.find((p: Doc) => p.name === "limit").schema.default = 50), /^BREAKING {2}GET \/streams {2}\/paths\/~1streams\/get\/parameters\/1\/schema\/default: default changed from 20 to 50: clients that leave it out get another behaviour \(request\)$/m],
  ["an optional parameter made required", (doc) => (doc.paths["/streams"].get.parameters.find((p: Doc) => p.name === "limit").required = true), /^BREAKING {2}GET \/streams {2}\/paths\/~1streams\/get\/parameters\/1: query parameter limit now required$/m],
  ["a response type widened", (doc) => (schemas(doc).StreamDetail.properties.viewer_count.type = ["integer", "null"]), /^BREAKING {2}GET \/streams\/\{id\} {2}\S+\/properties\/viewer_count\/type: type changed from integer to integer \| null \(response\)$/m],
  ["a required response field made optional", (doc) => (schemas(doc).StreamDetail.required = without(schemas(doc).StreamDetail.required, "ended_at")), /^BREAKING {2}GET \/streams\/\{id\} {2}\S+\/properties\/ended_at: field ended_at no longer required \(response\)$/m],
  ["a status code removed", (doc) => delete doc.paths["/streams/{id}"].get.responses["404"], /^BREAKING {2}GET \/streams\/\{id\} {2}\/paths\/~1streams~1\{id\}\/get\/responses\/404: response 404 removed$/m],
  [
    "an error code removed",
    (doc) => (schemas(doc).StreamTooManyRequestsError.properties.error.properties.code.enum = ["rate_limited"]),
    /^BREAKING {2}POST \/streams {2}\/paths\/~1streams\/post\/responses\/429\/content\/application~1json\/schema\/properties\/error\/properties\/code\/enum: enum value "concurrency_limit" removed \(response\)$/m,
  ],
  ["a request enum value removed", (doc) => (schemas(doc).Platform.enum = without(schemas(doc).Platform.enum, "instagram")), /^BREAKING {2}POST \/streams {2}\S+\/requestBody\/\S+\/properties\/platform\/enum: enum value "instagram" removed \(request\)$/m],
  ["a value added to a response enum clients are not told to expect", (doc) => schemas(doc).StreamStatus.enum.push("paused"), /^BREAKING {2}GET \/streams\/\{id\} {2}\S+\/properties\/status\/enum: enum value "paused" added \(response\)$/m],
  ["a new success status", (doc) => (doc.paths["/streams"].post.responses["202"] = { description: "Accepted." }), /^BREAKING {2}POST \/streams {2}\/paths\/~1streams\/post\/responses\/202: response 202 added: clients do not expect this success status$/m],
  ["a public operation now needing a key", (doc) => (doc.paths["/creators"].get.security = [{ apiKey: [] }]), /^BREAKING {2}GET \/creators {2}\/paths\/~1creators\/get\/security: authentication by no credentials no longer accepted$/m],
  ["an endpoint's scope changed", (doc) => (doc.paths["/analytics"].get["x-required-scope"] = "streams:read"), /^BREAKING {2}GET \/analytics {2}\S+: required scope changed from analytics:read to streams:read: keys without it are refused$/m],
  ["a webhook payload field removed", (doc) => delete schemas(doc).WebhookEvent.properties.created_at, /^BREAKING {2}webhook stream\.ended {2}\/webhooks\/stream\.ended\/post\/requestBody\/content\/application~1json\/schema\/properties\/created_at: delivery field created_at removed$/m],
];

const COMPATIBLE: Array<[string, (doc: Doc) => void, RegExp]> = [
  ["a response field added", (doc) => (schemas(doc).StreamDetail.properties.thumbnail_url = { type: "string", format: "uri" }), /^compatible {2}GET \/streams\/\{id\} {2}\S+\/properties\/thumbnail_url: response field thumbnail_url added; the contract tells clients to expect new fields$/m],
  [
    "an optional query parameter added",
    (doc) => doc.paths["/streams"].get.parameters.push({ name: "platform", in: "query", required: false, schema: { type: "string" } }),
    /^compatible {2}GET \/streams {2}\/paths\/~1streams\/get\/parameters\/3: optional query parameter platform added$/m,
  ],
  [
    "an operation added",
    (doc) => (doc.paths["/streams/{id}/clips"] = { get: { operationId: "listClips", responses: { "200": { description: "The clips." } } } }),
    /^compatible {2}\/streams\/\{id\}\/clips {2}\/paths\/~1streams~1\{id\}~1clips: path added$/m,
  ],
  [
    "an error code added (the contract says to expect new ones)",
    (doc) => schemas(doc).StreamTooManyRequestsError.properties.error.properties.code.enum.push("brand_suspended"),
    /^compatible {2}POST \/streams {2}\S+\/responses\/429\/\S+\/properties\/error\/properties\/code\/enum: enum value "brand_suspended" added; the contract tells clients to expect new values here \(response\)$/m,
  ],
  ["a webhook event type added (the contract says to expect new ones)", (doc) => schemas(doc).WebhookEventType.enum.push("stream.paused"), /^compatible {2}GET \/webhooks {2}\S+\/enum: enum value "stream\.paused" added; the contract tells clients to expect new values here \(response\)$/m],
  ["a request limit raised", (doc) => (schemas(doc).StreamCreate.properties.script.maxLength = 100_000), /^compatible {2}POST \/streams {2}\S+\/properties\/script\/maxLength: maxLength raised from 50000 to 100000 \(request\)$/m],
];

describe("npm run contract:diff, the breaking-change gate", () => {
  it("passes on today's openapi.yaml against the newest released contract", async () => {
    const lines: string[] = [];
    const code = await run([], (line) => lines.push(line));
    const output = lines.join("\n");
    expect(output).toMatch(/contract\/released\/\d+\.\d+\.\d+\.yaml \(\S+\) → openapi\.yaml/);
    expect(output).toMatch(/^0 breaking, \d+ compatible changes?$/m);
    expect(code).toBe(0);
  });

  it("passes on a breaking change listed in the accepted changes for the base version, and on no other", async () => {
    const revision = editedContract((doc) => {
      schemas(doc).StreamCreate.properties.product_name.maxLength = 100;
      schemas(doc).StreamCreate.properties.script.maxLength = 100;
    });
    const pointer = (field: string) => `/paths/~1streams/post/requestBody/content/application~1json/schema/properties/${field}/maxLength`;
    const entry = (field: string, change: string) => ({ where: "POST /streams", pointer: pointer(field), change, why: "a reason" });
    const list = (base: string, changes: object[]) => {
      const file = join(scratch, `accepted-${(edits += 1)}.yaml`);
      writeFileSync(file, toYamlText({ base, changes }));
      return file;
    };
    const accepting = (file: string) => run(["--base", RELEASED, "--revision", revision, "--accepted", file], () => {});
    const both = [entry("product_name", "maxLength lowered from 200 to 100 (request)"), entry("script", "maxLength lowered from 50000 to 100 (request)")];
    const lines: string[] = [];
    expect(await run(["--base", RELEASED, "--revision", revision, "--accepted", list("1.0.0", both)], (line) => lines.push(line))).toBe(0);
    expect(lines.join("\n")).toMatch(/^accepted {2}POST \/streams {2}\S+\/product_name\/maxLength: maxLength lowered from 200 to 100 \(request\); a reason$/m);
    expect(lines.join("\n")).toMatch(/^2 breaking changes accepted/m);
    // One of the two only; the other message differs (another bound); another base version.
    expect(await accepting(list("1.0.0", both.slice(0, 1)))).toBe(1);
    expect(await accepting(list("1.0.0", [both[0]!, entry("script", "maxLength lowered from 50000 to 200 (request)")]))).toBe(1);
    expect(await accepting(list("0.9.0", both))).toBe(1);
  });

  it.each(BREAKING)("fails on %s, naming the operation, the JSON pointer and the change", async (_name, edit, line) => {
    const { code, output } = await diff(editedContract(edit));
    expect(output).toMatch(line);
    expect(output).toMatch(/^[1-9]\d* breaking, \d+ compatible changes?$/m);
    expect(output).toMatch(/need a new major version \(info\.version 2\.0\.0/);
    expect(code).toBe(1);
  });

  it.each(COMPATIBLE)("passes on %s and prints it", async (_name, edit, line) => {
    const { code, output } = await diff(editedContract(edit));
    expect(output).toMatch(line);
    expect(output).toMatch(/^0 breaking, [1-9]\d* compatible changes?$/m);
    expect(code).toBe(0);
  });

  it("counts every breaking change, one line each", async () => {
    const { code, output } = await diff(editedContract((doc) => BREAKING.slice(0, 3).forEach(([, edit]) => edit(doc))));
    const lines = output.split("\n").filter((text) => text.startsWith("BREAKING"));
    expect(new Set(lines).size).toBe(lines.length);
    expect(output).toContain(`${lines.length} breaking,`);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(code).toBe(1);
  });

  it("passes breaking changes when the major version goes up, and still lists them", async () => {
    const { code, output } = await diff(
      editedContract((doc) => {
        BREAKING.slice(0, 6).forEach(([, edit]) => edit(doc));
        doc.info.version = "2.0.0";
      }),
    );
    for (const [, , line] of BREAKING.slice(0, 6)) expect(output).toMatch(line);
    expect(output).toMatch(/^Allowed: the major version went from 1 to 2\.$/m);
    expect(code).toBe(0);
  });

  it("does not let a minor or patch bump excuse a breaking change", async () => {
    for (const version of ["1.1.0", "1.0.1"]) {
      const { code } = await diff(editedContract((doc) => ((doc.info.version = version), BREAKING[0]![1](doc))));
      expect(code).toBe(1);
    }
  });

  it("refuses a version lower than the release", async () => {
    const base = editedContract((doc) => (doc.info.version = "1.2.0"));
    const { code, output } = await diff(editedContract((doc) => (doc.info.version = "1.1.9")), base);
    expect(output).toMatch(/info\.version 1\.1\.9 is lower than the released 1\.2\.0/);
    expect(code).toBe(1);
  });

  it("stops on a contract it cannot resolve instead of passing it", async () => {
    const broken = editedContract((doc) => (doc.paths["/streams/{id}"].get.responses["200"].content["application/json"].schema = { $ref: "#/components/schemas/Missing" }));
    await expect(diff(broken)).rejects.toThrow(/Can't resolve \$ref/);
  });

  it("leaves the operator API (x-internal) out: it is not part of the public contract", async () => {
    const { code, output } = await diff(editedContract((doc) => delete doc.paths["/brands"]));
    expect(output).not.toMatch(/brands/);
    expect(code).toBe(0);
  });

  it("reports a renamed path parameter as nothing: it is not on the wire", async () => {
    const { code, output } = await diff(
      editedContract((doc) => {
        doc.paths["/streams/{stream_id}"] = doc.paths["/streams/{id}"];
        delete doc.paths["/streams/{id}"];
        doc.paths["/streams/{stream_id}"].parameters = [{ name: "stream_id", in: "path", required: true, schema: { type: "string" } }];
      }),
    );
    expect(output).toMatch(/^0 breaking, 0 compatible changes$/m);
    expect(code).toBe(0);
  });
});

describe("the npm script", () => {
  const npm = (args: string[]) =>
    promisify(execFile)("npm", ["run", "--silent", "contract:diff", "--", ...args], { cwd: ROOT }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );

  it("exits 0 on the repository's contract and 1 on a breaking edit", async () => {
    const today = await npm([]);
    expect(today.stdout).toMatch(/^contract:diff contract\/released\/\d+\.\d+\.\d+\.yaml \(\S+\) → openapi\.yaml/m);
    expect(today.code).toBe(0);
    const broken = await npm(["--revision", editedContract(BREAKING[0]![1])]);
    expect(broken.stdout).toMatch(BREAKING[0]![2]);
    expect(broken.code).toBe(1);
  }, 60_000);
});

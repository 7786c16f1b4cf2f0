/**
 * The release gate as CI runs it: `npm run contract:diff` on this checkout, and with `--root` on
 * scratch copies of it (openapi.yaml, the changelogs, the manifests, contract/released/) with one
 * edit each.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parseYamlText, toYamlText } from "../../contract/load.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FILES = [
  "openapi.yaml",
  "CHANGELOG.md",
  "package.json",
  "sdk/package.json",
  "sdk/CHANGELOG.md",
  "contract/released",
];
const VERSION = (parseYamlText(readFileSync(join(ROOT, "openapi.yaml"), "utf8")) as Doc).info.version as string;
const scratchDirs: string[] = [];
afterAll(() => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

type Doc = Record<string, any>;

async function gate(root?: string): Promise<{ code: number; output: string }> {
  const args = ["run", "--silent", "contract:diff", ...(root ? ["--", "--root", root] : [])];
  return promisify(execFile)("npm", args, { cwd: ROOT }).then(
    ({ stdout }) => ({ code: 0, output: stdout }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      output: `${error.stdout}${error.stderr}`,
    }),
  );
}

interface Scratch {
  /** Applied to openapi.yaml. */
  edit?: (doc: Doc) => void;
  /** Applied to the latest released contract (what it did not yet state). */
  editRelease?: (doc: Doc) => void;
  /** The new version, with entries in both changelogs unless `changelog` is false. */
  version?: string;
  changelog?: boolean;
}

/** A copy of the release files of this checkout with `edit` applied; returns its directory. */
function scratch({ edit, editRelease, version, changelog = true }: Scratch): string {
  const dir = mkdtempSync(join(tmpdir(), "contract-diff-"));
  scratchDirs.push(dir);
  mkdirSync(join(dir, "sdk"));
  for (const file of FILES) cpSync(join(ROOT, file), join(dir, file), { recursive: true });
  const doc = parseYamlText(readFileSync(join(dir, "openapi.yaml"), "utf8")) as Doc;
  edit?.(doc);
  if (editRelease) {
    const released = join(dir, "contract", "released", `${VERSION}.yaml`);
    const releasedDoc = parseYamlText(readFileSync(released, "utf8")) as Doc;
    editRelease(releasedDoc);
    writeFileSync(released, toYamlText(releasedDoc));
  }
  if (version) {
    doc.info.version = version;
    for (const manifest of ["package.json", "sdk/package.json"])
      rewrite(dir, manifest, (text) => text.replace(/"version": "[^"]+"/, `"version": "${version}"`));
    if (changelog) {
      for (const file of ["CHANGELOG.md", "sdk/CHANGELOG.md"])
        rewrite(dir, file, (text) =>
          text.replace(/^## /m, `## ${version} — Unreleased\n\n### Changed\n\n- The edit.\n\n## `),
        );
    }
  }
  writeFileSync(join(dir, "openapi.yaml"), toYamlText(doc));
  return dir;
}

function rewrite(dir: string, file: string, change: (text: string) => string): void {
  writeFileSync(join(dir, file), change(readFileSync(join(dir, file), "utf8")));
}

const schemas = (doc: Doc) => doc.components.schemas;
const addResponseField = (doc: Doc) =>
  (schemas(doc).StreamDetail.properties.thumbnail_url = { type: "string", format: "uri" });
const removeResponseField = (doc: Doc) => {
  delete schemas(doc).StreamDetail.properties.room_name;
  schemas(doc).StreamDetail.required = schemas(doc).StreamDetail.required.filter(
    (name: string) => name !== "room_name",
  );
};
const next = (bump: "major" | "minor" | "patch") => {
  const [major, minor, patch] = VERSION.split(".").map(Number) as [number, number, number];
  return bump === "major"
    ? `${major + 1}.0.0`
    : bump === "minor"
      ? `${major}.${minor + 1}.0`
      : `${major}.${minor}.${patch + 1}`;
};

describe.concurrent("npm run contract:diff, the release gate", { timeout: 120_000 }, () => {
  it("passes on this checkout: openapi.yaml is the newest released contract, with its changelog entries", async () => {
    const { code, output } = await gate();
    expect(output).toContain(`contract:diff contract/released/${VERSION}.yaml → openapi.yaml ${VERSION}`);
    expect(output).toMatch(/^✔ /m);
    expect(code).toBe(0);
  });

  it("fails on a field added without a version bump, naming the minor version it needs", async () => {
    const { code, output } = await gate(scratch({ edit: addResponseField }));
    expect(output).toMatch(
      /minor {2}added {5}GET \/streams\/\{id\} {2}responses\/200\/content\/application\/json\/schema\/properties\/thumbnail_url/,
    );
    expect(output).toContain(
      `✖ redocly diff: info.version stayed ${VERSION}, but these changes require a minor bump (${next("minor")}).`,
    );
    expect(code).toBe(1);
  });

  it("passes on the same field with the next minor version and its changelog entries", async () => {
    const { code, output } = await gate(scratch({ edit: addResponseField, version: next("minor") }));
    expect(output).toContain(`✔ ${next("minor")} is a right bump from ${VERSION}`);
    expect(code).toBe(0);
  });

  it("fails on the next minor version without its changelog entries", async () => {
    const { code, output } = await gate(scratch({ edit: addResponseField, version: next("minor"), changelog: false }));
    expect(output).toContain(`✖ CHANGELOG.md has no entry for ${next("minor")}`);
    expect(output).toContain(`✖ sdk/CHANGELOG.md has no entry for ${next("minor")}`);
    expect(code).toBe(1);
  });

  it("fails on a removed field with the next minor version: it needs a major one", async () => {
    const { code, output } = await gate(scratch({ edit: removeResponseField, version: next("minor") }));
    expect(output).toMatch(
      /major {2}removed {3}GET \/streams\/\{id\} {2}\S+\/properties\/room_name\n +Property `room_name` of `StreamDetail` was removed\. \(property-removed\)/,
    );
    expect(output).toContain(`these changes require a major bump (${next("major")})`);
    expect(code).toBe(1);
  });

  it("passes on a removed field with the next major version", async () => {
    expect((await gate(scratch({ edit: removeResponseField, version: next("major") }))).code).toBe(0);
  });

  it("asks a patch version for a description-only change, and passes with it", async () => {
    const edit = (doc: Doc) =>
      (schemas(doc).StreamCreate.properties.script.description = "What the AI host says, in its words.");
    const unchanged = await gate(scratch({ edit }));
    expect(unchanged.output).toMatch(/patch {2}modified {2}POST \/streams {2}\S+\/properties\/script · description/);
    expect(unchanged.output).toContain(`require a patch bump (${next("patch")})`);
    expect(unchanged.code).toBe(1);
    expect((await gate(scratch({ edit, version: next("patch") }))).code).toBe(0);
  });

  it("lets through a minor version the additions the contract promises, and a documented limit as a patch", async () => {
    const promised = (doc: Doc) => {
      schemas(doc).StreamTooManyRequestsError.properties.error.properties.code.enum.push("brand_suspended");
      schemas(doc).WebhookEventType.enum.push("stream.paused");
    };
    // The release did not state the limit that openapi.yaml states.
    const unlimited = (doc: Doc) => delete schemas(doc).WebhookCreate.properties.events.maxItems;
    const added = await gate(scratch({ edit: promised, version: next("minor") }));
    expect(added.output).toMatch(
      /minor {2}modified {2}POST \/streams {2}\S+\/error\/properties\/code · enum\n +Enum of `code` gained values: 'brand_suspended'/,
    );
    expect(added.output).toMatch(
      /minor {2}modified {2}\S+ \S+ {2}\S+ · enum\n +Enum of `type` gained values: 'stream\.paused'/,
    );
    expect(added.code).toBe(0);
    const limited = await gate(scratch({ editRelease: unlimited, version: next("patch") }));
    expect(limited.output).toMatch(
      /patch {2}modified {2}POST \/webhooks {2}\S+\/properties\/events · maxItems\n +`maxItems` of `events` was set to '3'/,
    );
    expect(limited.code).toBe(0);
  });

  it("rates a request pattern that now also admits the empty string a patch, and the same in an answer major", async () => {
    const listenHeader = (doc: Doc) =>
      doc.paths["/webhooks/listen"].get.parameters.find((parameter: Doc) => parameter.name === "Last-Event-ID").schema;
    // The release had the strict pattern; openapi.yaml admits "" too (an empty header is "from now").
    const strictRequest = (doc: Doc) => {
      listenHeader(doc).pattern = "^evt_[0-9a-f]{32}$";
    };
    expect((await gate(scratch({ editRelease: strictRequest, version: next("patch") }))).code).toBe(0);
    const emptyAnswer = (doc: Doc) => {
      schemas(doc).CreatorSummary.properties.id.pattern = "^(avt_[A-Za-z0-9]{12})?$";
    };
    const answered = await gate(scratch({ edit: emptyAnswer, version: next("minor") }));
    expect(answered.output).toMatch(/needs a major version: only a new upper bound/);
    expect(answered.code).toBe(1);
  });

  it("rates the canonical UUID pattern set on a 36-character uuid a patch, and any other pattern major", async () => {
    const streamFilter = (doc: Doc) =>
      doc.paths["/webhooks/deliveries"].get.parameters.find((parameter: Doc) => parameter.name === "stream_id").schema;
    // The release had `format: uuid` and maxLength 36 alone; openapi.yaml restates it as a pattern.
    const unpatterned = (doc: Doc) => {
      delete streamFilter(doc).pattern;
    };
    expect((await gate(scratch({ editRelease: unpatterned, version: next("patch") }))).code).toBe(0);
    const lowercaseOnly = (doc: Doc) => {
      streamFilter(doc).pattern = streamFilter(doc).pattern.replaceAll("A-F", "");
    };
    const narrowed = await gate(scratch({ editRelease: unpatterned, edit: lowercaseOnly, version: next("patch") }));
    expect(narrowed.output).toMatch(/needs a major version: only a new upper bound/);
    expect(narrowed.code).toBe(1);
  });

  it("judges what redocly rates lower as needing a major version, saying why", async () => {
    const edit = (doc: Doc) => {
      schemas(doc).StreamStatus.enum.push("paused");
      schemas(doc).StreamCreate.properties.product_name.maxLength = 100;
      doc.paths["/analytics"].get["x-required-scope"] = "streams:read";
      doc.paths["/streams"].get.parameters.find((parameter: Doc) => parameter.name === "limit").schema.default = 50;
      schemas(doc).StreamTooManyRequestsError.properties.error.properties.code.enum = ["rate_limited"];
    };
    const { code, output } = await gate(scratch({ edit, version: next("minor") }));
    const reasons = [
      /Enum of `status` gained values: 'paused'\. \(enum-values-added\)\n +needs a major version: new values are promised only for error codes and event types \(contract:diff\)/,
      /`maxLength` of `product_name` changed from '200' to '100'\. \(schema-constraint-changed\)\n +needs a major version: only a new upper bound/,
      /major {2}modified {2}GET \/analytics {2}x-required-scope\n +x-required-scope "analytics:read" → "streams:read": keys without the new scope are refused \(contract:diff\)/,
      /major {2}modified {2}GET \/streams {2}parameters\/1\/schema · default\n +default 20 → 50: requests that leave it out now get another behaviour \(contract:diff\)/,
      /major {2}modified {2}POST \/streams {2}\S+\/code · enum\n +enum values removed: "concurrency_limit"; clients branch on and wait for documented values \(contract:diff\)/,
    ];
    for (const reason of reasons) expect(output).toMatch(reason);
    expect(output).toMatch(/; 5 more major judged by contract:diff$/m);
    expect(output).toContain(
      `✖ info.version ${next("minor")}: the changes marked (contract:diff) need a major version (${next("major")})`,
    );
    expect(code).toBe(1);
  });

  it("leaves the operator API (x-internal) out: it is not part of the public contract", async () => {
    const { code, output } = await gate(scratch({ edit: (doc) => delete doc.paths["/brands"] }));
    expect(output).toContain("redocly diff: 0 major, 0 minor, 0 patch");
    expect(code).toBe(0);
  });

  it("fails a release whose pieces disagree: manifests, released files, changelog dates, guides", async () => {
    const dir = scratch({});
    rewrite(dir, "sdk/package.json", (text) => text.replace(/"version": "[^"]+"/, '"version": "0.9.0"'));
    cpSync(join(dir, "contract", "released", `${VERSION}.yaml`), join(dir, "contract", "released", "0.9.0.yaml"));
    rewrite(dir, "CHANGELOG.md", (text) => text.replace(/^## (\S+) — \S+$/m, "## $1 — Unreleased"));
    writeFileSync(join(dir, "README.md"), "npm install ./live-stream-hosting-sdk-0.9.0.tgz\n");
    const { code, output } = await gate(dir);
    expect(output).toContain(`✖ contract/released/0.9.0.yaml has info.version ${VERSION}: name it after its version`);
    expect(output).toContain(`✖ sdk/package.json has version 0.9.0, not the contract's ${VERSION}`);
    expect(output).toContain(
      `✖ README.md names live-stream-hosting-sdk-0.9.0.tgz: this release packs live-stream-hosting-sdk-${VERSION}.tgz`,
    );
    expect(output).toContain(
      `✖ CHANGELOG.md: ${VERSION} is released (contract/released/${VERSION}.yaml) but its entry says Unreleased: date it`,
    );
    expect(code).toBe(1);
  });

  it("stops on a contract it cannot resolve instead of passing it", async () => {
    const edit = (doc: Doc) =>
      (doc.paths["/streams/{id}"].get.responses["200"].content["application/json"].schema = {
        $ref: "#/components/schemas/Missing",
      });
    const { code, output } = await gate(scratch({ edit }));
    expect(output).toMatch(/contract:diff: .*openapi\.yaml: Can't resolve \$ref/);
    expect(code).toBe(2);
  });
});

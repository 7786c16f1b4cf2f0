/**
 * The code samples of the docs page: one curl and one TypeScript (SDK) sample per public
 * operation, and the webhook verification sample, kept as files in docs/samples/ so the test
 * command can run every one of them (docs/samples.test.ts). `npm run docs` puts them into the
 * published contract as Redocly's `x-codeSamples`.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const SAMPLES_DIR = fileURLToPath(new URL("../docs/samples/", import.meta.url));

/** The webhook page's sample: a receiver that verifies each delivery with the SDK. */
export const VERIFY_SAMPLE = "verifyWebhook.ts";

export interface CodeSample {
  /** Redoc CE shows only the languages redocly.yaml lists under openapi.codeSamples. */
  lang: "curl" | "TypeScript";
  label: string;
  source: string;
}

export function sampleFile(operationId: string, lang: CodeSample["lang"]): string {
  return `${SAMPLES_DIR}${operationId}.${lang === "curl" ? "sh" : "ts"}`;
}

/** The samples of one public operation; throws when one is missing, so a new operation cannot ship without. */
export function operationSamples(operationId: string): CodeSample[] {
  return [
    { lang: "curl", label: "curl", file: sampleFile(operationId, "curl") },
    { lang: "TypeScript", label: "TypeScript (SDK)", file: sampleFile(operationId, "TypeScript") },
  ].map(({ file, ...sample }) => {
    if (!existsSync(file))
      throw new Error(`${operationId} has no sample ${file}: every public operation needs a curl and an SDK sample.`);
    return { ...sample, lang: sample.lang as CodeSample["lang"], source: readFileSync(file, "utf8").trimEnd() };
  });
}

export function verifySample(): CodeSample {
  return {
    lang: "TypeScript",
    label: "Verify (SDK)",
    source: readFileSync(`${SAMPLES_DIR}${VERIFY_SAMPLE}`, "utf8").trimEnd(),
  };
}

const METHODS = ["get", "post", "put", "patch", "delete"];

/**
 * Adds `x-codeSamples` to every operation of a (public) contract and to each of its webhooks,
 * in place; returns how many operations and webhooks got samples.
 */
export function addCodeSamples(doc: Record<string, any>): { operations: number; webhooks: number } {
  let operations = 0;
  for (const item of Object.values<Record<string, any>>(doc.paths ?? {})) {
    for (const method of METHODS) {
      if (!item[method]) continue;
      item[method]["x-codeSamples"] = operationSamples(item[method].operationId);
      operations++;
    }
  }
  let webhooks = 0;
  for (const item of Object.values<Record<string, any>>(doc.webhooks ?? {})) {
    for (const method of METHODS) {
      if (!item[method]) continue;
      item[method]["x-codeSamples"] = [verifySample()];
      webhooks++;
    }
  }
  return { operations, webhooks };
}

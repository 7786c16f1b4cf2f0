/**
 * Writes generated/limits.ts: the contract's limits and patterns (contract/limits.ts) as constants,
 * for code that needs them synchronously and cannot wait for the contract to load (the domain's
 * 480-minute cap and API-key shape, the longest error message). Part of `npm run generate`;
 * `npm run generate:check` fails when the committed file differs from what this would write.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadContract } from "../contract/contract.ts";
import type { ContractLimits } from "../contract/limits.ts";

export const LIMITS_FILE = fileURLToPath(new URL("../generated/limits.ts", import.meta.url));

export function renderLimits(limits: ContractLimits): string {
  const constant = (doc: string, name: string, value: unknown) =>
    `/** ${doc} */\nexport const ${name} = ${JSON.stringify(value)} as const;\n`;
  return [
    "// Generated from openapi.yaml by `npm run generate` (scripts/generate-limits.ts). Do not edit.\n",
    constant("GET /streams `limit`: its default and the range applied.", "pageSize", limits.pageSize),
    constant("GET /streams `offset`: its default and the range applied.", "offset", limits.offset),
    constant(
      "The longest error `message`; the server cuts longer ones.",
      "errorMessageMaxLength",
      limits.errorMessageMaxLength,
    ),
    constant(
      "The longest delivery `error` the operator API shows; longer ones are cut.",
      "deliveryErrorMaxLength",
      limits.deliveryErrorMaxLength,
    ),
    constant(
      "The longest receiver's answer a delivery's attempt shows; longer ones are cut.",
      "attemptResponseMaxLength",
      limits.attemptResponseMaxLength,
    ),
    constant(
      "POST /streams `duration_minutes`: the planned length's range.",
      "durationMinutes",
      limits.durationMinutes,
    ),
    constant("GET /analytics `period`: the values and the default.", "periods", limits.periods),
    `/** The shape of an API key (KeyCreated \`key\`). */\nexport const apiKeyPattern = new RegExp(${JSON.stringify(limits.apiKeyPattern.source)});\n`,
    constant(
      "The longest dashboard password, set or sent (every password field's maxLength).",
      "passwordMaxLength",
      limits.passwordMaxLength,
    ),
    constant(
      "Webhooks one brand may have in one mode (WebhookList `webhooks` maxItems); POST /webhooks refuses more.",
      "webhooksPerBrand",
      limits.webhooksPerBrand,
    ),
    constant(
      "A brand's caps: usable API keys, open invitations, members (the maxItems of the lists showing them).",
      "brandCaps",
      limits.brandCaps,
    ),
    constant(
      "A member's sessions in the dashboard: how many are listed, the longest User-Agent kept (DashboardSessionList).",
      "memberSessions",
      limits.memberSessions,
    ),
    constant(
      "A stream's timeline in the dashboard: its most entries and deliveries (DashboardStreamTimeline).",
      "streamTimeline",
      limits.streamTimeline,
    ),
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(LIMITS_FILE, renderLimits((await loadContract()).limits), "utf8");
}

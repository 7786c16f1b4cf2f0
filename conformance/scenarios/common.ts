import type { Exchange } from "../client.ts";
import type { Operation } from "../contract.ts";
import { sampleRequest } from "../requests.ts";
import type { Call, ScenarioContext } from "../scenario.ts";

/** Sends the sample request of `op` (see requests.ts) with these call options. */
export async function callSample(ctx: ScenarioContext, op: Operation, call: Call = {}): Promise<Exchange> {
  const sample = sampleRequest(op, { creatorId: await ctx.creatorId() });
  return ctx.call(sample.method, sample.path, { ...(sample.body !== undefined ? { body: sample.body } : {}), ...call });
}

/** The public operations that take an API key. */
export function securedOperations(ctx: ScenarioContext): Operation[] {
  return ctx.contract.publicOperations.filter((op) => op.secured);
}

/** A valid POST /streams body for a test key; override fields per request. */
export async function streamBody(
  ctx: ScenarioContext,
  overrides: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  return { creator_id: await ctx.creatorId(), product_name: "Conformance trainers", platform: "youtube", ...overrides };
}

/** Starts a test-key stream (live at once) and returns its id. */
export async function startStream(
  ctx: ScenarioContext,
  key: string = ctx.key,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const answer = await ctx.call("POST", "/streams", { key, body: await streamBody(ctx, overrides) });
  if (answer.status !== 201)
    throw new Error(`starting a stream answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  return answer.body.stream_id as string;
}

/** All pages of GET /streams (`query` without limit/offset), in order. */
export async function listAll(
  ctx: ScenarioContext,
  { key = ctx.key, query = "", limit = 100 } = {},
): Promise<{ ids: string[]; totals: number[]; items: any[] }> {
  const items: any[] = [];
  const totals: number[] = [];
  for (let offset = 0; ; offset += limit) {
    const page = await ctx.call("GET", `/streams?${query}${query ? "&" : ""}limit=${limit}&offset=${offset}`, { key });
    if (page.status !== 200) throw new Error(`GET /streams answered ${page.status}: ${page.text.slice(0, 200)}`);
    items.push(...page.body.streams);
    totals.push(page.body.total);
    if (page.body.streams.length < limit) break;
  }
  return { ids: items.map((item) => item.id), totals, items };
}

/** A live-key stream in a fresh brand: it answers 201 `preparing` while the host joins. */
export async function startLiveStream(
  ctx: ScenarioContext,
  durationMinutes: number,
): Promise<{ key: string; created: Exchange }> {
  const { key } = await (await ctx.tenant()).key({ environment: "live" });
  return {
    key,
    created: await ctx.call("POST", "/streams", {
      key,
      body: await streamBody(ctx, { duration_minutes: durationMinutes }),
    }),
  };
}

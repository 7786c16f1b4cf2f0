/**
 * The dynamic mock's story (issue 43): one sequence of requests a partner makes, replayed on the
 * dynamic mock and on the server, with a test key and a live key of brands alike (the mock's
 * brand settings, mock/keys.ts). On each target the story checks itself (distinct v4 ids; a
 * created stream is listed, read, ended, 404 once ended, counted in analytics and heard on
 * `listen`; a live key's `ws_url` names its `room_name`; error messages name the key's mode),
 * and `storyDifferences` pairs the two targets' answers request by request: the same statuses,
 * error codes, messages (ids aside) and shapes.
 */
import { randomUUID } from "node:crypto";
import type { Exchange, Request, Send } from "./client.ts";

/** One request of the story and its answer. */
export interface StoryStep {
  label: string;
  exchange: Exchange;
}

export interface StoryRun {
  steps: StoryStep[];
  /** What did not hold of the story on this target. */
  failures: string[];
}

/** The keys a story runs with: on the mock any new keys, on the server keys of two new brands. */
export interface StoryKeys {
  test: string;
  live: string;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** A webhook host that resolves nowhere (RFC 2606): nothing is ever delivered to it. */
const HOOK = "https://hooks.story.invalid/live";

/** The messages of an event stream's text: each `data:` line, parsed. */
function listenedEvents(text: string): Array<{ type: string; data: { stream_id: string } }> {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)));
}

/**
 * Runs the story. `tick` moves the target's clock on (the in-process server's is manual): events
 * of one stream made at one instant would have no order of their own.
 */
export async function runStory(
  send: Send,
  keys: StoryKeys,
  creatorId: string,
  tick: () => Promise<void>,
): Promise<StoryRun> {
  const steps: StoryStep[] = [];
  const failures: string[] = [];
  const expect = (holds: unknown, what: string) => {
    if (!holds) failures.push(what);
  };
  const step = async (label: string, request: Request): Promise<Exchange> => {
    const exchange = await send(request);
    steps.push({ label, exchange });
    return exchange;
  };
  const body = (overrides: Record<string, unknown> = {}) => ({
    creator_id: creatorId,
    product_name: "Story sneakers",
    platform: "youtube",
    ...overrides,
  });
  const test = keys.test;
  const live = keys.live;

  // Test mode: a new brand has nothing.
  const empty = await step("an empty list", { method: "GET", path: "/streams", key: test });
  expect(empty.body?.total === 0, `a new key's brand lists ${empty.body?.total} streams, not 0`);

  const created: Exchange[] = [];
  for (const n of [1, 2, 3])
    created.push(await step(`start stream ${n}`, { method: "POST", path: "/streams", key: test, body: body() }));
  const ids = created.map((answer) => answer.body?.stream_id as string);
  expect(
    created.every((answer) => answer.status === 201),
    `starts answered ${created.map((a) => a.status)}`,
  );
  expect(new Set(ids).size === 3, `three starts gave ids ${ids.join(", ")}: not distinct`);
  expect(
    ids.every((id) => UUID_V4.test(id ?? "")),
    `not version-4 UUIDs: ${ids.join(", ")}`,
  );
  const [first, second] = ids as [string, string, string];

  const over = await step("a fourth start meets the limit", {
    method: "POST",
    path: "/streams",
    key: test,
    body: body(),
  });
  expect(
    over.body?.error?.code === "concurrency_limit",
    `a fourth start answered ${over.status} ${over.text.slice(0, 80)}`,
  );
  expect(
    /\btest mode\b/.test(over.body?.error?.message ?? ""),
    `a test key's concurrency_limit says: ${over.body?.error?.message}`,
  );

  const pageOne = await step("the first page", { method: "GET", path: "/streams?limit=2", key: test });
  const pageTwo = await step("the second page", { method: "GET", path: "/streams?limit=2&offset=2", key: test });
  const listed = [...(pageOne.body?.streams ?? []), ...(pageTwo.body?.streams ?? [])].map(
    (stream: { id: string }) => stream.id,
  );
  expect(pageOne.body?.total === 3 && pageTwo.body?.total === 3, "the pages' total is not 3");
  expect(
    listed.length === 3 && ids.every((id) => listed.includes(id)),
    `the pages list ${listed.join(", ")}, not the three started`,
  );

  const read = await step("read a started stream", { method: "GET", path: `/streams/${first}`, key: test });
  expect(
    read.body?.status === "live" && read.body?.room_name === created[0]!.body?.room_name,
    `reading ${first}: ${read.text.slice(0, 120)}`,
  );
  const ended = await step("end it", { method: "DELETE", path: `/streams/${first}`, key: test });
  expect(ended.status === 200 && ended.body?.status === "ended", `ending ${first} answered ${ended.status}`);
  const after = await step("read it ended", { method: "GET", path: `/streams/${first}`, key: test });
  expect(
    after.body?.status === "ended" && after.body?.ended_at === ended.body?.ended_at,
    "the stream read after its end is not ended at the time its end answered",
  );
  const again = await step("end it again", { method: "DELETE", path: `/streams/${first}`, key: test });
  expect(again.status === 404 && again.body?.error?.code === "not_found", `ending it again answered ${again.status}`);
  const endedList = await step("list the ended", { method: "GET", path: "/streams?status=ended", key: test });
  expect(
    (endedList.body?.streams ?? []).some((stream: { id: string }) => stream.id === first),
    "status=ended does not list the ended stream",
  );

  const analytics = await step("analytics", { method: "GET", path: "/analytics?period=24h", key: test });
  const counted = (analytics.body?.streams ?? []).map((stream: { id: string }) => stream.id);
  expect(
    analytics.body?.total_streams === 3 && ids.every((id) => counted.includes(id)),
    `analytics counts ${analytics.body?.total_streams} streams (${counted.join(", ")}), not the three started`,
  );
  const one = await step("one stream's analytics", {
    method: "GET",
    path: `/analytics?stream_id=${first}`,
    key: test,
  });
  expect(
    one.body?.total_streams === 1 && one.body?.streams?.[0]?.id === first,
    "analytics of one stream do not name it alone",
  );

  const failed = await step("a launch that fails", {
    method: "POST",
    path: "/streams",
    key: test,
    body: body({ product_name: "Story sim:launch-failed" }),
  });
  expect(failed.body?.error?.code === "launch_failed", `sim:launch-failed answered ${failed.status}`);
  await step("an unknown stream", { method: "GET", path: `/streams/${randomUUID()}`, key: test });
  await step("not a stream id", { method: "DELETE", path: "/streams/not-a-uuid", key: test });

  const hook = await step("register a webhook", {
    method: "POST",
    path: "/webhooks",
    key: test,
    body: { url: HOOK, events: ["stream.ended"] },
  });
  await step("list the webhooks", { method: "GET", path: "/webhooks", key: test });
  await step("delete the webhook", { method: "DELETE", path: `/webhooks?id=${hook.body?.webhook_id}`, key: test });
  await step("no deliveries", { method: "GET", path: "/webhooks/deliveries", key: test });

  const clock = await step("read the test clock", { method: "GET", path: "/test-clock", key: test });
  expect(clock.body?.offset_seconds === 0, `a new brand's test clock is ${clock.body?.offset_seconds} s ahead`);
  const advanced = await step("advance it", {
    method: "POST",
    path: "/test-clock/advance",
    key: test,
    body: { seconds: 600 },
  });
  expect(
    advanced.body?.offset_seconds === 600,
    `after a 600 s advance the clock is ${advanced.body?.offset_seconds} s ahead`,
  );
  const stillLive = await step("a test stream lives on", { method: "GET", path: `/streams/${second}`, key: test });
  expect(stillLive.body?.status === "live", `after the advance ${second} is ${stillLive.body?.status}`);

  // Heard on listen: a stream started and ended while the stream is open.
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const listening = send({
    method: "GET",
    path: "/webhooks/listen",
    key: test,
    stream: { opened, until: (text) => listenedEvents(text).length >= 2 },
  });
  await open;
  const heard = await step("start a stream while listening", {
    method: "POST",
    path: "/streams",
    key: test,
    body: body(),
  });
  await tick();
  await step("end it while listening", { method: "DELETE", path: `/streams/${heard.body?.stream_id}`, key: test });
  const listened = await listening;
  steps.push({ label: "listen", exchange: listened });
  const events = listenedEvents(listened.text);
  expect(
    events.map((event) => `${event.type} ${event.data.stream_id}`).join(", ") ===
      `stream.started ${heard.body?.stream_id}, stream.ended ${heard.body?.stream_id}`,
    `listen heard ${events.map((event) => event.type).join(", ") || "nothing"}`,
  );

  // Live mode, on simulated hosts.
  await step("a live key has no test clock", { method: "GET", path: "/test-clock", key: live });
  await step("a live key must say how long", { method: "POST", path: "/streams", key: live, body: body() });
  const liveStarts: Exchange[] = [];
  for (const n of [1, 2, 3])
    liveStarts.push(
      await step(`start live stream ${n}`, {
        method: "POST",
        path: "/streams",
        key: live,
        body: body({ duration_minutes: 30 }),
      }),
    );
  for (const start of liveStarts) {
    const { status, ws_url: wsUrl, room_name: room } = start.body ?? {};
    expect(status === "preparing", `a live start is ${status}`);
    expect(
      typeof wsUrl === "string" && typeof room === "string" && wsUrl.endsWith(`/${room}`),
      `ws_url ${wsUrl} does not name room ${room}`,
    );
  }
  const liveOver = await step("a fourth live start meets the limit", {
    method: "POST",
    path: "/streams",
    key: live,
    body: body({ duration_minutes: 30 }),
  });
  expect(
    /\blive mode\b/.test(liveOver.body?.error?.message ?? ""),
    `a live key's concurrency_limit says: ${liveOver.body?.error?.message}`,
  );
  const liveId = liveStarts[0]!.body?.stream_id;
  await step("read a preparing stream", { method: "GET", path: `/streams/${liveId}`, key: live });
  await step("a preparing stream cannot be ended", { method: "DELETE", path: `/streams/${liveId}`, key: live });
  const liveList = await step("the live key's list", { method: "GET", path: "/streams", key: live });
  expect(liveList.body?.total === 3, `the live key lists ${liveList.body?.total} streams, not its 3`);
  const otherMode = await step("the test stream is not the live key's", {
    method: "GET",
    path: `/streams/${second}`,
    key: live,
  });
  expect(otherMode.status === 404, `a live key reads another brand's test stream: ${otherMode.status}`);
  return { steps, failures };
}

/** Ids and times, which differ from one run to another whatever the target. */
function normalized(message: string): string {
  return message
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<id>")
    .replace(/\d{4}-\d{2}-\d{2}T[\d:.]+Z/g, "<time>");
}

/** The JSON shape of a value: object keys with their shapes, an array's distinct element shapes, types. */
export function shapeOf(value: unknown): unknown {
  if (value === null) return "null";
  if (Array.isArray(value)) {
    const shapes = new Map(value.map((item) => [JSON.stringify(shapeOf(item)), shapeOf(item)]));
    return [...shapes.keys()].sort().map((key) => shapes.get(key));
  }
  if (typeof value === "object")
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, shapeOf((value as Record<string, unknown>)[key])]),
    );
  return typeof value;
}

/** What one answer is, for comparison: status, and the error's code and message or the body's shape. */
function summary(exchange: Exchange): unknown {
  if ((exchange.headers.get("content-type") ?? "").startsWith("text/event-stream"))
    return { status: exchange.status, events: listenedEvents(exchange.text).map((event) => event.type) };
  const error = exchange.body?.error;
  if (error) return { status: exchange.status, code: error.code, message: normalized(error.message) };
  return { status: exchange.status, shape: shapeOf(exchange.body) };
}

export interface StoryDifference {
  label: string;
  mock: string;
  server: string;
}

/** The requests whose answers differ between the two targets (the same story on each). */
export function storyDifferences(mock: StoryRun, server: StoryRun): StoryDifference[] {
  const differences: StoryDifference[] = [];
  const length = Math.max(mock.steps.length, server.steps.length);
  for (let i = 0; i < length; i++) {
    const [onMock, onServer] = [mock.steps[i], server.steps[i]];
    const [a, b] = [onMock && summary(onMock.exchange), onServer && summary(onServer.exchange)];
    if (JSON.stringify(a) !== JSON.stringify(b))
      differences.push({
        label: onMock?.label ?? onServer?.label ?? `step ${i}`,
        mock: JSON.stringify(a) ?? "(no such step)",
        server: JSON.stringify(b) ?? "(no such step)",
      });
  }
  return differences;
}

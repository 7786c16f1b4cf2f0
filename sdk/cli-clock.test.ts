// `live-stream-hosting clock [advance <duration>]` against the real server in-process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, streamBody, type TestServer } from "../testkit/harness.ts";
import { EXIT_OK, EXIT_USAGE, MOCK_HEADER, main } from "./cli.ts";
import { advanceSecondsOf, formatSeconds } from "./cli-clock.ts";

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ key } = await server.tenant());
});
afterAll(() => server?.close());

async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, {
    env: { LIVE_STREAM_HOSTING_API_KEY: key, LIVE_STREAM_HOSTING_BASE_URL: `${server.baseUrl}/api/v1` },
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("live-stream-hosting clock", () => {
  it("prints the test clock, advances it, and a 30-minute stream has ended once it moved 31 minutes", async () => {
    const start = server.clock().toISOString();
    expect(await run(["clock"])).toEqual({
      code: EXIT_OK,
      out: `Test clock: ${start}, 0s ahead of real time (offset 0 s)`,
      err: "",
    });
    const created = await server.call("POST", "/api/v1/streams", { key, body: streamBody({ duration_minutes: 30 }) });
    const advanced = await run(["clock", "advance", "31m"]);
    expect(advanced.code).toBe(EXIT_OK);
    expect(advanced.out).toContain(
      `Advanced the test clock by 31m: ${new Date(Date.parse(start) + 31 * 60_000).toISOString()}, 31m ahead of real time (offset 1860 s)`,
    );
    const stream = (await server.call("GET", `/api/v1/streams/${created.body.stream_id}`, { key })).body;
    expect(stream.status).toBe("ended");
    expect(Date.parse(stream.ended_at) - Date.parse(stream.started_at)).toBe(30 * 60_000);
    expect((await run(["clock", "advance", "2h"])).out).toContain("2h 31m ahead of real time (offset 9060 s)");
  });

  it.each([
    [["clock", "advance"], /needs a duration/],
    [["clock", "advance", "8d"], /from 1s to 7d.*got "8d"/],
    [["clock", "advance", "0s"], /from 1s to 7d/],
    [["clock", "advance", "soon"], /from 1s to 7d/],
    [["clock", "advance", "2h", "now"], /unexpected argument "now"/],
    [["clock", "rewind", "2h"], /clock takes advance <duration> or nothing, not "rewind"/],
    [["clock", "--api-key", "svc_live_abc"], /refusing a live key/],
  ])("%j exits 2, saying what is wrong", async (argv, message) => {
    const { code, err, out } = await run(argv);
    expect(code).toBe(EXIT_USAGE);
    expect(err).toMatch(message);
    expect(out).toBe("");
  });

  it("stops with exit code 2 on the static mock, which keeps no clock", async () => {
    const err: string[] = [];
    const code = await main(["clock", "advance", "2h"], {
      env: { LIVE_STREAM_HOSTING_API_KEY: key, LIVE_STREAM_HOSTING_BASE_URL: "http://127.0.0.1:4010/api/v1" },
      out: () => undefined,
      err: (line) => err.push(line),
      fetch: async () => new Response("{}", { headers: { [MOCK_HEADER]: "static" } }),
    });
    expect(code).toBe(EXIT_USAGE);
    expect(err.join("\n")).toMatch(/is the static mock .* it has no test clock to read or move/);
  });

  it("reads durations as whole seconds up to 7 days and prints them back", () => {
    expect(["90s", "30m", "2h", "7d", "8d", "0s"].map(advanceSecondsOf)).toEqual([
      90,
      1_800,
      7_200,
      604_800,
      null,
      null,
    ]);
    expect([0, 90, 9_060, 694_861].map(formatSeconds)).toEqual(["0s", "1m 30s", "2h 31m", "8d 1h 1m 1s"]);
  });
});

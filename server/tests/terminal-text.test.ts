// Control characters in the free text that the CLIs and the dashboard print (key and brand names)
// and in webhook URLs are refused, so no escape sequence (an OSC 8 link, a screen clear, a bell)
// is stored to act on a terminal later. What was stored before is escaped where it is printed
// (sdk/terminal-text.ts; the CLIs' tests show it).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { member } from "../../testkit/dashboard-browser.ts";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "../../testkit/harness.ts";

const OSC8 = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\";
const CONTROLS = { "OSC 8 (ESC)": OSC8, BEL: "\x07", "C1 CSI": "\u009b2J", DEL: "\x7f", "line feed": "\n" };

let server: TestServer;
let key: string;
let brandId: string;
let owner: Awaited<ReturnType<typeof member>>;
beforeAll(async () => {
  server = await startTestServer();
  ({ key, brandId } = await server.tenant());
  owner = await member(server, brandId, "terminal@example.com");
}, 120_000);
afterAll(() => server?.close());

describe.each(Object.entries(CONTROLS))("%s", (_label, control) => {
  // Webhooks are registered only through the API (spec §6); the dashboard has no such form.
  it("in a webhook URL: 400 invalid_url from the API", async () => {
    const url = `https://hooks.brand.example/livestream${control}`;
    const api = await server.call("POST", "/api/v1/webhooks", { key, body: { url, events: ["stream.ended"] } });
    expect(api.status).toBe(400);
    expect(api.body.error.code).toBe("invalid_url");
  });

  it("in a key name (dashboard, operator API) or a brand name: 400 invalid_fields", async () => {
    const name = `Staging ${control}`;
    const answers = [
      await owner.send("POST", "/modes/test/keys", { name, scopes: ["streams:read"] }),
      await server.call("POST", "/admin/v1/keys", {
        key: ADMIN_TOKEN,
        body: { brand_id: brandId, name, environment: "test", scopes: ["streams:read"] },
      }),
      await server.call("POST", "/admin/v1/brands", {
        key: ADMIN_TOKEN,
        body: { name, vertical: "live-commerce", plan: "growth" },
      }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe("invalid_fields");
      expect(answer.body.error.message).toMatch(/name/);
    }
  });
});

it("names and URLs without control characters, Unicode included, are accepted", async () => {
  const created = await owner.send("POST", "/modes/test/keys", { name: "Café 日本 🎥", scopes: ["streams:read"] });
  expect(created.status).toBe(201);
  const webhook = await server.call("POST", "/api/v1/webhooks", {
    key,
    body: { url: "https://hooks.brand.example/caf%C3%A9", events: ["stream.ended"] },
  });
  expect(webhook.status).toBe(201);
});

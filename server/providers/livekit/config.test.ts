import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../config.ts";
import { silentLogger } from "../../observability/logger.ts";
import { agentProviderFor } from "../select.ts";
import { liveKitUrls } from "./provider.ts";

const LIVEKIT = {
  AGENT_PROVIDER: "livekit",
  LIVEKIT_URL: "wss://acme.livekit.cloud",
  LIVEKIT_API_KEY: "APIabc123",
  LIVEKIT_API_SECRET: "s3cr3t-value-that-must-never-be-printed",
  LIVEKIT_AGENT_NAME: "lsh-host",
};

describe("AGENT_PROVIDER and the LiveKit settings", () => {
  it("defaults to the simulated provider, which needs no LiveKit setting", async () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ agentProvider: "simulated", livekit: undefined });
    expect(await agentProviderFor(config, { logger: silentLogger() })).toMatchObject({ simulated: true });
  });

  it("reads the LiveKit settings, with the documented defaults", async () => {
    const config = loadConfig(LIVEKIT);
    expect(config.livekit).toEqual({
      url: "wss://acme.livekit.cloud",
      apiKey: "APIabc123",
      apiSecret: LIVEKIT.LIVEKIT_API_SECRET,
      agentName: "lsh-host",
      requestTimeoutMs: 5_000,
      checkIntervalMs: 30_000,
    });
    const provider = await agentProviderFor(config, { logger: silentLogger() });
    expect(provider.simulated).toBe(false);
    expect(provider.webhooks?.name).toBe("livekit");
  });

  it.each([
    [{ AGENT_PROVIDER: "agora" }, "AGENT_PROVIDER"],
    [{ ...LIVEKIT, LIVEKIT_URL: undefined }, "LIVEKIT_URL"],
    [{ ...LIVEKIT, LIVEKIT_URL: "ftp://acme.livekit.cloud" }, "LIVEKIT_URL"],
    [{ ...LIVEKIT, LIVEKIT_URL: "wss://key:secret@acme.livekit.cloud" }, "LIVEKIT_URL"],
    [{ ...LIVEKIT, LIVEKIT_URL: `wss://acme.livekit.cloud/${"a".repeat(2000)}` }, "LIVEKIT_URL"],
    [{ ...LIVEKIT, LIVEKIT_API_KEY: "" }, "LIVEKIT_API_KEY"],
    [{ ...LIVEKIT, LIVEKIT_API_SECRET: undefined }, "LIVEKIT_API_SECRET"],
    [{ ...LIVEKIT, LIVEKIT_AGENT_NAME: " " }, "LIVEKIT_AGENT_NAME"],
    [{ ...LIVEKIT, LIVEKIT_REQUEST_TIMEOUT_MS: "5s" }, "LIVEKIT_REQUEST_TIMEOUT_MS"],
    [{ ...LIVEKIT, LIVEKIT_CHECK_INTERVAL_MS: "10" }, "LIVEKIT_CHECK_INTERVAL_MS"],
  ])("stops with a message naming the variable for %j", (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });

  it("never prints the API secret in a start-up error", () => {
    const secret = "a secret with spaces";
    expect(() => loadConfig({ ...LIVEKIT, LIVEKIT_API_SECRET: secret })).toThrow("LIVEKIT_API_SECRET");
    try {
      loadConfig({ ...LIVEKIT, LIVEKIT_API_SECRET: secret });
    } catch (error) {
      expect((error as Error).message).not.toContain(secret);
    }
  });

  it("answers the WebSocket form of the URL to viewers and calls the room service over HTTP(S)", () => {
    expect(liveKitUrls("wss://acme.livekit.cloud/")).toEqual({
      wsUrl: "wss://acme.livekit.cloud",
      apiUrl: "https://acme.livekit.cloud",
    });
    expect(liveKitUrls("https://lk.example.com")).toEqual({
      wsUrl: "wss://lk.example.com",
      apiUrl: "https://lk.example.com",
    });
    expect(liveKitUrls("http://127.0.0.1:7880")).toEqual({
      wsUrl: "ws://127.0.0.1:7880",
      apiUrl: "http://127.0.0.1:7880",
    });
  });
});

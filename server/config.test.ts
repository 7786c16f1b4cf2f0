import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.ts";

describe("configuration", () => {
  it("has the documented defaults", () => {
    expect(loadConfig({})).toMatchObject({
      port: 8080,
      host: undefined,
      databaseUrl: undefined,
      adminToken: undefined,
      publicBaseUrl: "http://localhost:8080",
      preparingTimeoutMs: 300_000,
      simAgentJoinMs: 3_000,
      webhookTimeoutMs: 10_000,
      webhookRetryScheduleMs: [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000],
      webhookAllowHosts: [],
      dashboardRateLimit: { perSession: 300, perAddress: 100 },
    });
    expect(
      loadConfig({ DASHBOARD_RATE_LIMIT_PER_MINUTE: "20", DASHBOARD_SIGNED_OUT_RATE_LIMIT_PER_MINUTE: "5" })
        .dashboardRateLimit,
    ).toEqual({ perSession: 20, perAddress: 5 });
  });

  it.each([
    [{ PORT: "eighty" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    // HOST is an address to listen on, never a name to resolve, nor with a port.
    [{ HOST: "localhost" }, "HOST"],
    [{ HOST: "api.example.com" }, "HOST"],
    [{ HOST: "127.0.0.1:8080" }, "HOST"],
    [{ HOST: "[::1]" }, "HOST"],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ PUBLIC_BASE_URL: "ftp://x" }, "PUBLIC_BASE_URL"],
    // Discovery answers carry it, and openapi.yaml bounds them at 2,048 characters.
    [{ PUBLIC_BASE_URL: `https://api.example.com/${"a".repeat(2000)}` }, "PUBLIC_BASE_URL"],
    [{ PREPARING_TIMEOUT_MS: "-1" }, "PREPARING_TIMEOUT_MS"],
    [{ WEBHOOK_RETRY_SCHEDULE_MS: "1000,soon" }, "WEBHOOK_RETRY_SCHEDULE_MS"],
    // Six delays would make a seventh attempt; the contract allows six in all.
    [{ WEBHOOK_RETRY_SCHEDULE_MS: "1,2,3,4,5,6" }, "WEBHOOK_RETRY_SCHEDULE_MS"],
    [{ ADMIN_TOKEN: "short" }, "ADMIN_TOKEN"],
    [{ LOG_LEVEL: "verbose" }, "LOG_LEVEL"],
    [{ METRICS_TOKEN: "short" }, "METRICS_TOKEN"],
    [{ METRICS_TOKEN: "a token with spaces in it" }, "METRICS_TOKEN"],
    [{ HTTP_REQUEST_TIMEOUT_MS: "0" }, "HTTP_REQUEST_TIMEOUT_MS"],
    [{ HTTP_HEADERS_TIMEOUT_MS: "5s" }, "HTTP_HEADERS_TIMEOUT_MS"],
    [{ HTTP_REQUEST_TIMEOUT_MS: "5000", HTTP_HEADERS_TIMEOUT_MS: "6000" }, "HTTP_HEADERS_TIMEOUT_MS"],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_MS: "-1" }, "HTTP_KEEP_ALIVE_TIMEOUT_MS"],
    [{ DASHBOARD_RATE_LIMIT_PER_MINUTE: "0" }, "DASHBOARD_RATE_LIMIT_PER_MINUTE"],
    [{ DASHBOARD_SIGNED_OUT_RATE_LIMIT_PER_MINUTE: "lots" }, "DASHBOARD_SIGNED_OUT_RATE_LIMIT_PER_MINUTE"],
    [{ TRUST_PROXY: "maybe" }, "TRUST_PROXY"],
    [{ TRUST_PROXY: "10.0.0.0/33" }, "TRUST_PROXY"],
    [{ TRUST_PROXY: "10.0.0.1, proxy.internal" }, "TRUST_PROXY"],
    [{ TRUST_PROXY: "10.0.0.1," }, "TRUST_PROXY"],
  ])("stops with a message naming the variable for %j", (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });

  it("reads LOG_LEVEL (info by default, any case) and METRICS_TOKEN (unset: no /metrics)", () => {
    expect(loadConfig({})).toMatchObject({ logLevel: "info", metricsToken: undefined });
    expect(loadConfig({ LOG_LEVEL: " Debug ", METRICS_TOKEN: "metrics-token-0123456789" })).toMatchObject({
      logLevel: "debug",
      metricsToken: "metrics-token-0123456789",
    });
    expect(loadConfig({ LOG_LEVEL: "silent", METRICS_TOKEN: "" })).toMatchObject({
      logLevel: "silent",
      metricsToken: undefined,
    });
  });

  it("has transport limits and a data directory resolved against the working directory", () => {
    expect(loadConfig({})).toMatchObject({
      httpRequestTimeoutMs: 30_000,
      httpHeadersTimeoutMs: 10_000,
      httpKeepAliveTimeoutMs: 5_000,
      dataDir: resolve(".data"),
    });
    expect(loadConfig({ DATA_DIR: "/var/lib/lsh", HTTP_REQUEST_TIMEOUT_MS: "4000" })).toMatchObject({
      dataDir: "/var/lib/lsh",
      httpRequestTimeoutMs: 4_000,
      httpHeadersTimeoutMs: 4_000,
    });
  });

  it("bounds every wait on PostgreSQL, by default and as set, and refuses a pool of none", () => {
    expect(loadConfig({}).databasePool).toEqual({
      max: 10,
      acquireTimeoutMs: 5_000,
      statementTimeoutMs: 10_000,
      idleInTransactionTimeoutMs: 30_000,
    });
    const env = {
      DATABASE_POOL_MAX: "4",
      DATABASE_POOL_ACQUIRE_TIMEOUT_MS: "1000",
      DATABASE_STATEMENT_TIMEOUT_MS: "2000",
      DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: "3000",
    };
    expect(loadConfig(env).databasePool).toEqual({
      max: 4,
      acquireTimeoutMs: 1_000,
      statementTimeoutMs: 2_000,
      idleInTransactionTimeoutMs: 3_000,
    });
    expect(() => loadConfig({ DATABASE_POOL_MAX: "0" })).toThrow(/DATABASE_POOL_MAX must be between 1 and 1000/);
    expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: "soon" })).toThrow(
      /DATABASE_STATEMENT_TIMEOUT_MS must be a whole number/,
    );
  });

  it.each([
    [undefined, false],
    ["", false],
    ["false", false],
    ["0", false],
    [
      "10.0.0.0/8, 192.168.1.7, ::1, fd00::/8, loopback, 172.16.0.0/255.240.0.0",
      ["10.0.0.0/8", "192.168.1.7", "::1", "fd00::/8", "loopback", "172.16.0.0/255.240.0.0"],
    ],
  ])("reads TRUST_PROXY=%s as %j", (raw, expected) => {
    expect(loadConfig(raw === undefined ? {} : { TRUST_PROXY: raw }).trustProxy).toEqual(expected);
  });

  // A hop count believes the X-Forwarded-For of whatever peer connects: a client that reaches the
  // port directly would pick its own address. The message says what to set instead.
  it.each(["1", "2", "101", "true", "TRUE", "yes"])("refuses TRUST_PROXY=%s, a hop count", (raw) => {
    expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(
      `TRUST_PROXY=${raw} counts proxies, which believes the X-Forwarded-For of any peer that connects: a client that reaches the port directly could name its own address. List the proxies' addresses instead: TRUST_PROXY=loopback for nginx on the same host (with HOST=127.0.0.1), or their addresses and subnets, e.g. TRUST_PROXY=10.0.0.0/8`,
    );
  });

  it.each([
    [undefined, undefined],
    ["", undefined],
    ["127.0.0.1", "127.0.0.1"],
    [" ::1 ", "::1"],
    ["0.0.0.0", "0.0.0.0"],
    ["::", "::"],
    ["10.1.2.3", "10.1.2.3"],
  ])("reads HOST=%s as %j (unset: every interface)", (raw, expected) => {
    expect(loadConfig(raw === undefined ? {} : { HOST: raw }).host).toBe(expected);
  });

  it("parses lists and URLs", () => {
    const config = loadConfig({
      WEBHOOK_ALLOW_HOSTS: "LocalHost, 127.0.0.1",
      WEBHOOK_RETRY_SCHEDULE_MS: "10,20",
      PUBLIC_BASE_URL: "https://api.example.com/",
      DATABASE_URL: "memory:",
    });
    expect(config).toMatchObject({
      webhookAllowHosts: ["localhost", "127.0.0.1"],
      webhookRetryScheduleMs: [10, 20],
      publicBaseUrl: "https://api.example.com",
      databaseUrl: "memory:",
    });
  });
});

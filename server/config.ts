import { isIP } from "node:net";
import { resolve } from "node:path";
import { MAX_RETRIES, RETRY_SCHEDULE_MS } from "./domain/retry-schedule.ts";

/**
 * The one place that reads process.env. Every variable is validated here so a bad value stops
 * start-up with a message naming the variable, instead of failing later in a request.
 */
/**
 * TRUST_PROXY: `false`, no proxy is trusted and the socket's peer is the client; or
 * the proxies' addresses and subnets (`loopback`, `10.0.0.0/8`…), Express's `trust proxy` list,
 * whose semantics it follows (docs/operators.md#behind-a-proxy). Never a hop count: Express
 * believes the last N entries whoever the peer is, so a client that reaches the port directly
 * would name its own address; a list believes a peer's headers only when the peer is listed.
 */
export type TrustProxy = false | readonly string[];

export interface Config {
  port: number;
  /** HOST: the address listened on; `undefined`, every interface (Node's `::`, or `0.0.0.0` without IPv6). */
  host: string | undefined;
  /** `undefined` → embedded database in ./.data; `memory:` → in-memory; `postgres://…` → PostgreSQL. */
  databaseUrl: string | undefined;
  /** The embedded database's directory (absolute), used when DATABASE_URL is unset. */
  dataDir: string;
  /** PostgreSQL only: connections per process and the bounded waits (docs/operators.md). */
  databasePool: DatabasePoolConfig;
  adminToken: string | undefined;
  publicBaseUrl: string;
  preparingTimeoutMs: number;
  simAgentJoinMs: number;
  webhookTimeoutMs: number;
  webhookRetryScheduleMs: number[];
  webhookAllowHosts: string[];
  /**
   * TRUST_PROXY: the proxies whose X-Forwarded-For and X-Forwarded-Proto entries are believed (the
   * client's address and scheme: http/client-address.ts): none, or their addresses.
   */
  trustProxy: TrustProxy;
  /** The dashboard's session lifetimes: ended after this long unused, and this long after sign-in whatever happens. */
  dashboardSession: { idleMs: number; absoluteMs: number };
  /** The dashboard API's requests per minute: per signed-in session, and per client address without one. */
  dashboardRateLimit: { perSession: number; perAddress: number };
  /** How often the lifecycle sweeper and delivery worker look for due work. */
  sweepIntervalMs: number;
  /** The HTTP server's transport limits: a whole request, its headers, an idle keep-alive connection. */
  httpRequestTimeoutMs: number;
  httpHeadersTimeoutMs: number;
  httpKeepAliveTimeoutMs: number;
  /** pino's level for the JSON logs. */
  logLevel: LogLevel;
  /** Enables GET /metrics, for `Authorization: Bearer <METRICS_TOKEN>`. */
  metricsToken: string | undefined;
  /** TOKEN_FAILURES_BEFORE_WAIT: failed ADMIN_TOKEN/METRICS_TOKEN checks an address gets before waits begin. */
  tokenFailuresBeforeWait: number;
  /** TOTP_ENCRYPTION_KEY and TOTP_ENCRYPTION_KEYS_PREVIOUS: the AES-256-GCM keys of TOTP secrets at rest. */
  totpEncryption: { current: Buffer | undefined; previous: Buffer[] };
  /** The request log (docs/operators.md, Request log): REQUEST_LOG, REQUEST_LOG_RETENTION_DAYS, REQUEST_LOG_MAX_ROWS. */
  requestLog: RequestLogConfig;
  /** Who hosts live-key streams: the simulated agent, or LiveKit (then `livekit` is set). */
  agentProvider: AgentProviderName;
  livekit: LiveKitConfig | undefined;
}

export interface DatabasePoolConfig {
  max: number;
  acquireTimeoutMs: number;
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

export interface RequestLogConfig {
  /** REQUEST_LOG=off records nothing (GET /requests then lists what was kept). */
  enabled: boolean;
  /** Entries older than this many days are deleted by the lifecycle sweeper. */
  retentionDays: number;
  /** The most entries kept per brand and mode; the oldest beyond it are deleted. */
  maxRowsPerBrand: number;
}

/**
 * REQUEST_LOG (`on` by default, or `off`), REQUEST_LOG_RETENTION_DAYS (14) and
 * REQUEST_LOG_MAX_ROWS (100,000 per brand and mode).
 */
function requestLogSettings(env: Env): RequestLogConfig {
  const raw = (env.REQUEST_LOG ?? "").trim().toLowerCase();
  if (raw !== "" && raw !== "on" && raw !== "off")
    throw new ConfigError(`REQUEST_LOG must be on or off, got "${env.REQUEST_LOG}"`);
  return {
    enabled: raw !== "off",
    retentionDays: integerSetting(env, "REQUEST_LOG_RETENTION_DAYS", 14, { min: 1, max: 3_650 }),
    maxRowsPerBrand: integerSetting(env, "REQUEST_LOG_MAX_ROWS", 100_000, { min: 100, max: 100_000_000 }),
  };
}

export const AGENT_PROVIDERS = ["simulated", "livekit"] as const;
export type AgentProviderName = (typeof AGENT_PROVIDERS)[number];

export interface LiveKitConfig {
  /** The LiveKit server: wss://<project>.livekit.cloud, or a self-hosted ws(s):// or http(s):// URL. */
  url: string;
  apiKey: string;
  apiSecret: string;
  /** The agent's registered name; dispatched explicitly into each stream's room. */
  agentName: string;
  /** Each room service call gives up after this; a launch makes two calls. */
  requestTimeoutMs: number;
  /** See RoomService.checkIntervalMs. */
  checkIntervalMs: number;
}

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

/**
 * The one parser of whole-number environment settings, the server's and its tools' (the mock's
 * port, the conformance suite's runs and seed, the benchmark's duration), so each is refused alike,
 * with a message naming the variable. Unset or empty gives `fallback`.
 */
export function integerSetting(
  env: Env,
  name: string,
  fallback: number,
  { min = 0, max = Number.MAX_SAFE_INTEGER } = {},
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** The names Express's `trust proxy` gives address ranges. */
const PROXY_RANGE_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** An address, `address/prefix-length` or `address/netmask`, as Express's `trust proxy` takes them. */
function proxyAddressValid(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address = "", range, ...rest] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d{1,3}$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(range) === 4;
}

/**
 * HOST: the address the server listens on. Unset or empty, every interface (as before HOST
 * existed); otherwise one IP address of this machine (`127.0.0.1` or `::1`: this machine only,
 * e.g. behind nginx on the same host; `0.0.0.0` or `::`: every interface). A host name is refused
 * rather than resolved: it could resolve to another address than the one meant.
 */
function hostSetting(env: Env): string | undefined {
  const raw = (env.HOST ?? "").trim();
  if (raw === "") return undefined;
  if (isIP(raw) === 0)
    throw new ConfigError(
      `HOST must be an IP address of this machine to listen on (127.0.0.1 or ::1 for this machine only, 0.0.0.0 or :: for every interface), got "${raw}"`,
    );
  return raw;
}

/**
 * TRUST_PROXY: unset, `false` or `0`, no proxy (the socket's peer is the client); or a
 * comma-separated list of the proxies' addresses and subnets (`10.0.0.0/8`, `loopback`…), Express's
 * `trust proxy` semantics. A hop count (`1`, `true`) is refused: it believes whatever peer
 * connects, so a client that reaches the port directly could name its own address.
 */
function trustProxySetting(env: Env): TrustProxy {
  const raw = (env.TRUST_PROXY ?? "").trim();
  if (raw === "" || /^(false|no|0+)$/i.test(raw)) return false;
  if (/^(true|yes|\d+)$/i.test(raw))
    throw new ConfigError(
      `TRUST_PROXY=${raw} counts proxies, which believes the X-Forwarded-For of any peer that connects: a client that reaches the port directly could name its own address. List the proxies' addresses instead: TRUST_PROXY=loopback for nginx on the same host (with HOST=127.0.0.1), or their addresses and subnets, e.g. TRUST_PROXY=10.0.0.0/8`,
    );
  const entries = raw.split(",").map((entry) => entry.trim().toLowerCase());
  const bad = entries.find((entry) => !proxyAddressValid(entry));
  if (bad !== undefined)
    throw new ConfigError(
      `TRUST_PROXY must be false or the proxies' addresses (comma-separated IP addresses, subnets such as 10.0.0.0/8, loopback, linklocal, uniquelocal); "${bad}" is none of these`,
    );
  return entries;
}

function integerList(env: Env, name: string, fallback: number[], maxLength: number): number[] {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const parts = raw.split(",").map((part) => part.trim());
  if (parts.length === 0 || parts.some((part) => !/^\d+$/.test(part))) {
    throw new ConfigError(`${name} must be a comma-separated list of milliseconds, got "${raw}"`);
  }
  if (parts.length > maxLength)
    throw new ConfigError(`${name} has ${parts.length} delays; at most ${maxLength} are allowed`);
  return parts.map(Number);
}

function databaseUrl(env: Env): string | undefined {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === "") return undefined;
  if (raw === "memory:" || /^postgres(ql)?:\/\//.test(raw)) return raw;
  throw new ConfigError(`DATABASE_URL must be unset, "memory:" or a postgres:// URL, got "${raw}"`);
}

/** Node refuses a header time-out longer than the request time-out, so say so before it does. */
function httpTimeouts(
  env: Env,
): Pick<Config, "httpRequestTimeoutMs" | "httpHeadersTimeoutMs" | "httpKeepAliveTimeoutMs"> {
  const httpRequestTimeoutMs = integerSetting(env, "HTTP_REQUEST_TIMEOUT_MS", 30_000, { min: 1 });
  const httpHeadersTimeoutMs = integerSetting(env, "HTTP_HEADERS_TIMEOUT_MS", Math.min(10_000, httpRequestTimeoutMs), {
    min: 1,
  });
  if (httpHeadersTimeoutMs > httpRequestTimeoutMs) {
    throw new ConfigError(
      `HTTP_HEADERS_TIMEOUT_MS (${httpHeadersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${httpRequestTimeoutMs})`,
    );
  }
  return {
    httpRequestTimeoutMs,
    httpHeadersTimeoutMs,
    httpKeepAliveTimeoutMs: integerSetting(env, "HTTP_KEEP_ALIVE_TIMEOUT_MS", 5_000, { min: 1 }),
  };
}

function logLevel(env: Env): LogLevel {
  const raw = (env.LOG_LEVEL ?? "").trim().toLowerCase();
  if (raw === "") return "info";
  const level = LOG_LEVELS.find((candidate) => candidate === raw);
  if (!level) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${env.LOG_LEVEL}"`);
  return level;
}

function metricsToken(env: Env): string | undefined {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === "") return undefined;
  if (!/^\S{16,}$/.test(raw))
    throw new ConfigError("METRICS_TOKEN must be at least 16 characters long, without spaces");
  return raw;
}

/** A 256-bit key: 64 hex digits, or 32 bytes in base64 (or base64url). */
function encryptionKey(name: string, raw: string): Buffer {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64");
  if (key.length !== 32 || !/^[A-Za-z0-9+/_=-]+$/.test(text))
    throw new ConfigError(`${name} must be a 256-bit key: 64 hex digits or 32 bytes in base64 (openssl rand -hex 32)`);
  return key;
}

function totpEncryption(env: Env): Config["totpEncryption"] {
  const raw = env.TOTP_ENCRYPTION_KEY;
  const previous = (env.TOTP_ENCRYPTION_KEYS_PREVIOUS ?? "")
    .split(",")
    .filter((one) => one.trim() !== "")
    .map((one) => encryptionKey("TOTP_ENCRYPTION_KEYS_PREVIOUS", one));
  const current = raw === undefined || raw.trim() === "" ? undefined : encryptionKey("TOTP_ENCRYPTION_KEY", raw);
  if (!current && previous.length > 0)
    throw new ConfigError("TOTP_ENCRYPTION_KEYS_PREVIOUS is set without TOTP_ENCRYPTION_KEY: set the new key too");
  return { current, previous };
}

function agentProvider(env: Env): AgentProviderName {
  const raw = (env.AGENT_PROVIDER ?? "").trim().toLowerCase();
  if (raw === "") return "simulated";
  const name = AGENT_PROVIDERS.find((candidate) => candidate === raw);
  if (!name)
    throw new ConfigError(`AGENT_PROVIDER must be one of ${AGENT_PROVIDERS.join(", ")}, got "${env.AGENT_PROVIDER}"`);
  return name;
}

/** A required setting without spaces; `secret` keeps its value out of the message. */
function word(env: Env, name: string, { secret = false } = {}): string {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") throw new ConfigError(`${name} must be set with AGENT_PROVIDER=livekit`);
  if (!/^\S+$/.test(raw))
    throw new ConfigError(secret ? `${name} must not contain spaces` : `${name} must not contain spaces, got "${raw}"`);
  return raw;
}

function liveKitConfig(env: Env): LiveKitConfig {
  const url = word(env, "LIVEKIT_URL");
  shortEnough("LIVEKIT_URL", url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`LIVEKIT_URL must be the LiveKit server's wss:// (or https://) URL, got "${url}"`);
  }
  if (
    !["ws:", "wss:", "http:", "https:"].includes(parsed.protocol) ||
    parsed.username ||
    parsed.password ||
    parsed.search ||
    parsed.hash
  ) {
    throw new ConfigError(
      `LIVEKIT_URL must be the LiveKit server's wss:// (or https://) URL, without credentials or query, got "${url}"`,
    );
  }
  return {
    url,
    apiKey: word(env, "LIVEKIT_API_KEY"),
    apiSecret: word(env, "LIVEKIT_API_SECRET", { secret: true }),
    agentName: word(env, "LIVEKIT_AGENT_NAME"),
    requestTimeoutMs: integerSetting(env, "LIVEKIT_REQUEST_TIMEOUT_MS", 5_000, { min: 100, max: 60_000 }),
    checkIntervalMs: integerSetting(env, "LIVEKIT_CHECK_INTERVAL_MS", 30_000, { min: 1_000 }),
  };
}

/**
 * The longest PUBLIC_BASE_URL or LIVEKIT_URL: the answers that carry them (the discovery
 * document's `docs`/`openapi`, a stream's `ws_url`) are at most 2,048 characters in openapi.yaml.
 */
const MAX_URL_SETTING_LENGTH = 2000;

function shortEnough(name: string, url: string): void {
  if (url.length > MAX_URL_SETTING_LENGTH)
    throw new ConfigError(`${name} must be at most ${MAX_URL_SETTING_LENGTH} characters, got ${url.length}`);
}

function baseUrl(env: Env, port: number): string {
  const raw = env.PUBLIC_BASE_URL;
  if (raw === undefined || raw === "") return `http://localhost:${port}`;
  shortEnough("PUBLIC_BASE_URL", raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PUBLIC_BASE_URL must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`PUBLIC_BASE_URL must be an absolute http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, "");
}

export function loadConfig(env: Env = process.env): Config {
  const port = integerSetting(env, "PORT", 8080, { min: 0, max: 65535 });
  const adminToken = env.ADMIN_TOKEN === "" ? undefined : env.ADMIN_TOKEN;
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError("ADMIN_TOKEN must be at least 16 characters long");
  }
  return {
    port,
    host: hostSetting(env),
    databaseUrl: databaseUrl(env),
    dataDir: resolve(env.DATA_DIR || "./.data"),
    databasePool: {
      max: integerSetting(env, "DATABASE_POOL_MAX", 10, { min: 1, max: 1_000 }),
      acquireTimeoutMs: integerSetting(env, "DATABASE_POOL_ACQUIRE_TIMEOUT_MS", 5_000, { min: 1 }),
      statementTimeoutMs: integerSetting(env, "DATABASE_STATEMENT_TIMEOUT_MS", 10_000, { min: 1 }),
      idleInTransactionTimeoutMs: integerSetting(env, "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS", 30_000, { min: 1 }),
    },
    adminToken,
    publicBaseUrl: baseUrl(env, port),
    preparingTimeoutMs: integerSetting(env, "PREPARING_TIMEOUT_MS", 300_000, { min: 1 }),
    simAgentJoinMs: integerSetting(env, "SIM_AGENT_JOIN_MS", 3_000),
    webhookTimeoutMs: integerSetting(env, "WEBHOOK_TIMEOUT_MS", 10_000, { min: 1 }),
    // The spec's schedule by default (domain/retry-schedule.ts); never more delays than it has.
    webhookRetryScheduleMs: integerList(env, "WEBHOOK_RETRY_SCHEDULE_MS", [...RETRY_SCHEDULE_MS], MAX_RETRIES),
    webhookAllowHosts: (env.WEBHOOK_ALLOW_HOSTS ?? "")
      .split(",")
      .map((host) => host.trim().toLowerCase())
      .filter((host) => host !== ""),
    sweepIntervalMs: integerSetting(env, "SWEEP_INTERVAL_MS", 1_000, { min: 10 }),
    trustProxy: trustProxySetting(env),
    dashboardSession: {
      idleMs: integerSetting(env, "DASHBOARD_SESSION_IDLE_MINUTES", 12 * 60, { min: 1, max: 525_600 }) * 60_000,
      absoluteMs: integerSetting(env, "DASHBOARD_SESSION_MAX_HOURS", 7 * 24, { min: 1, max: 8_760 }) * 3_600_000,
    },
    dashboardRateLimit: {
      perSession: integerSetting(env, "DASHBOARD_RATE_LIMIT_PER_MINUTE", 300, { min: 1, max: 1_000_000 }),
      perAddress: integerSetting(env, "DASHBOARD_SIGNED_OUT_RATE_LIMIT_PER_MINUTE", 100, { min: 1, max: 1_000_000 }),
    },
    ...httpTimeouts(env),
    logLevel: logLevel(env),
    metricsToken: metricsToken(env),
    tokenFailuresBeforeWait: integerSetting(env, "TOKEN_FAILURES_BEFORE_WAIT", 5, { min: 1, max: 1_000_000 }),
    totpEncryption: totpEncryption(env),
    requestLog: requestLogSettings(env),
    ...providerSettings(env),
  };
}

function providerSettings(env: Env): Pick<Config, "agentProvider" | "livekit"> {
  const name = agentProvider(env);
  return { agentProvider: name, livekit: name === "livekit" ? liveKitConfig(env) : undefined };
}

/**
 * Whether a start-up failure should also print its stack: LOG_LEVEL debug or trace. `level` is
 * the loaded config's; without one (the failure may be a configuration error) LOG_LEVEL as set.
 */
export function stackOnStartupFailure(level: string | undefined, env: Env = process.env): boolean {
  const chosen = (level ?? env.LOG_LEVEL ?? "").trim().toLowerCase();
  return chosen === "debug" || chosen === "trace";
}

/** Settings for the operator CLI, a thin client of the admin API. */
export function loadCliConfig(env: Env = process.env): { adminUrl: string; adminToken: string } {
  const adminToken = env.ADMIN_TOKEN;
  if (!adminToken) throw new ConfigError("ADMIN_TOKEN must be set to use the operator CLI");
  const port = integerSetting(env, "PORT", 8080, { min: 1, max: 65535 });
  const base = env.ADMIN_URL ?? `${baseUrl(env, port)}/admin/v1`;
  return { adminUrl: base.replace(/\/+$/, ""), adminToken };
}

/** Test database for suites that run against both engines; unset means PGlite only. */
export function testDatabaseUrl(env: Env = process.env): string | undefined {
  return env.TEST_DATABASE_URL || undefined;
}

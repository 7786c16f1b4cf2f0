// A server process on either engine and a polling helper, for tests that judge the toolkit from
// outside (the SDK's tarball in an empty project against a server as `npm start` runs it).
import { testKeyMaker } from "../scripts/partner-sandbox.ts";
import { testDatabaseUrl } from "../server/config.ts";
import { type Engine, scratchPostgresDatabase } from "./harness.ts";
import { runServer, stop as stopProcess } from "./server-process.ts";

/** A server process on either engine, for tests that need no demo key (PostgreSQL prints none). */
export interface EngineServer {
  apiBase: string;
  /** A new brand and its all-scopes test key, through the operator API (`env` must set ADMIN_TOKEN). */
  newTestKey(): Promise<string>;
  /** SIGTERM, then the scratch PostgreSQL database (if any) dropped. */
  stop(): Promise<void>;
}

/**
 * `server/main.ts` in a process of its own on `engine`: in-memory PGlite, or a scratch database
 * on TEST_DATABASE_URL's server, dropped again by `stop`.
 */
export async function startServerOn(
  engine: Engine,
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<EngineServer> {
  const scratch = engine === "postgres" ? await scratchPostgresDatabase(testDatabaseUrl()!) : undefined;
  const server = runServer({ ...env, DATABASE_URL: scratch?.url ?? "memory:" });
  const stop = async () => {
    await stopProcess(server);
    await scratch?.drop();
  };
  try {
    const [, apiBase] = await server.waitFor(/API:\s+(\S+\/api\/v1)/, timeoutMs);
    return { apiBase: apiBase!, newTestKey: testKeyMaker(apiBase!, env.ADMIN_TOKEN), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What `probe` gives once it gives something, checked every `everyMs`; throws after `timeoutMs`. */
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  { timeoutMs = 30_000, everyMs = 100 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

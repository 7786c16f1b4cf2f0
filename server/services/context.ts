import type { Database, Queryable } from "../store/database.ts";
import type { AgentProvider } from "../providers/agent-provider.ts";

export type Clock = () => Date;

/** What the services need, injected so tests choose the database, the clock and the provider. */
export interface ServiceContext {
  db: Database;
  clock: Clock;
  provider: AgentProvider;
  preparingTimeoutMs: number;
  simAgentJoinMs: number;
}

/**
 * Runs inside the transaction that creates a resource (or ends a stream), after its write, so
 * what it records (the Idempotency-Key's resource) commits or rolls back with it.
 */
export type OnCreated = (tx: Queryable, resourceId: string) => Promise<void>;

import type { Database } from "../store/database.ts";
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

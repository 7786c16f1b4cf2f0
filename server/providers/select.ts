import type { Config } from "../config.ts";
import type { Logger } from "../observability/logger.ts";
import type { AgentProvider } from "./agent-provider.ts";
import { liveKitAgentProvider } from "./livekit/provider.ts";
import { simulatedAgentProvider } from "./simulated-agent.ts";

/** The agent provider AGENT_PROVIDER names, configured from its settings. */
export function agentProviderFor(config: Pick<Config, "livekit" | "preparingTimeoutMs" | "simAgentJoinMs">, { logger }: { logger: Logger }): AgentProvider {
  if (config.livekit) return liveKitAgentProvider({ ...config.livekit, preparingTimeoutMs: config.preparingTimeoutMs }, { logger });
  return simulatedAgentProvider({ joinAfterMs: config.simAgentJoinMs });
}

import type { Config } from "../config.ts";
import type { AgentProvider, ProviderLog } from "./agent-provider.ts";
import { simulatedAgentProvider } from "./simulated-agent.ts";

/**
 * The agent provider AGENT_PROVIDER names, configured from its settings. LiveKit's SDK is loaded
 * only when LiveKit is configured: loading it took about 0.2 s of CPU and 13 MB that the simulated
 * provider does not need (docs/performance.md, Start-up).
 */
export async function agentProviderFor(
  config: Pick<Config, "livekit" | "preparingTimeoutMs" | "simAgentJoinMs">,
  { logger }: { logger: ProviderLog },
): Promise<AgentProvider> {
  if (!config.livekit) return simulatedAgentProvider({ joinAfterMs: config.simAgentJoinMs });
  const { liveKitAgentProvider } = await import("./livekit/provider.ts");
  return liveKitAgentProvider({ ...config.livekit, preparingTimeoutMs: config.preparingTimeoutMs }, { logger });
}

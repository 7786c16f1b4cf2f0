import type { LaunchRequest } from "../agent-provider.ts";

/**
 * What the host agent receives, as JSON, both as the room's metadata and as the dispatch's job
 * metadata (docs/livekit.md). Field names follow the public API's.
 */
export interface AgentMetadata {
  stream_id: string;
  creator_id: string;
  product_name: string;
  platform: string;
  vertical: string;
  script: string | null;
  duration_minutes: number | null;
}

export function agentMetadata(request: LaunchRequest): string {
  const metadata: AgentMetadata = {
    stream_id: request.streamId,
    creator_id: request.creatorId,
    product_name: request.productName,
    platform: request.platform,
    vertical: request.vertical,
    script: request.script,
    duration_minutes: request.durationMinutes,
  };
  return JSON.stringify(metadata);
}

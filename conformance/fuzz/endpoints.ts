/**
 * The server's endpoints outside openapi.yaml, with the successful answers their documentation
 * gives them (docs/operators.md for the probes and /metrics, docs/livekit.md for the LiveKit
 * webhook, the README for /docs, docs/dashboard.md for the dashboard's app). Anything else they
 * answer must be an error in the API's envelope, like any path the contract does not name.
 */
export interface Endpoint {
  name: string;
  path: string;
  /** The paths that reach it: Express routes /docs and the provider webhook without regard to case or a trailing slash. */
  pattern: RegExp;
  /** Method → the statuses documented as its successful answers. */
  successes: Readonly<Record<string, readonly number[]>>;
  /**
   * Statuses a conditional GET (If-None-Match, If-Modified-Since) may get besides: 304 for the
   * docs, which are a page like any other. Never for an API answer or a probe.
   */
  conditional?: readonly number[];
}

const read = { GET: [200], HEAD: [200] } as const;

export const ENDPOINTS: readonly Endpoint[] = [
  { name: "healthz", path: "/healthz", pattern: /^\/healthz$/, successes: read },
  // 503 with the failing check is the readiness probe's documented answer; the judge checks it names one.
  { name: "readyz", path: "/readyz", pattern: /^\/readyz$/, successes: read },
  { name: "metrics", path: "/metrics", pattern: /^\/metrics$/, successes: read },
  { name: "docs", path: "/docs", pattern: /^\/docs\/?$/i, successes: read, conditional: [304] },
  {
    name: "docs openapi.yaml",
    path: "/docs/openapi.yaml",
    pattern: /^\/docs\/openapi\.yaml\/?$/i,
    successes: read,
    conditional: [304],
  },
  // The dashboard's app (docs/dashboard.md): its files, and index.html for every other path, once
  // built (before, 404 in the envelope); not its API under /dashboard/api/, which is the contract's.
  {
    name: "dashboard app",
    path: "/dashboard",
    pattern: /^\/dashboard(?:\/(?!(?-i:api)(?:\/|$)).*)?$/is,
    successes: read,
    conditional: [304],
  },
  {
    name: "LiveKit webhook",
    path: "/providers/livekit/webhook",
    pattern: /^\/providers\/livekit\/webhook\/?$/i,
    successes: { POST: [204] },
  },
];

export function endpointAt(path: string): Endpoint | undefined {
  return ENDPOINTS.find((endpoint) => endpoint.pattern.test(path));
}

import type { Request } from "autocannon";
import type { FanOutOperationId } from "./fan-out.ts";
import type { GrowthOperationId } from "./growth.ts";
import type { Target } from "./targets.ts";
import { streamBody, type Tenant } from "./tenant.ts";

export type OperationId = "list" | "get" | "creators" | "cycle" | GrowthOperationId | FanOutOperationId;

export interface Operation {
  id: OperationId;
  label: string;
  requests(target: Target, tenant: Tenant): Request[];
}

const auth = (tenant: Tenant) => ({ authorization: `Bearer ${tenant.key}` });

export const OPERATIONS: readonly Operation[] = [
  {
    id: "list",
    label: "GET /streams?limit=20",
    requests: (target, tenant) => [{ method: "GET", path: `${target.prefix}/streams?limit=20`, headers: auth(tenant) }],
  },
  {
    id: "get",
    label: "GET /streams/{id}",
    requests: (target, tenant) => [
      { method: "GET", path: `${target.prefix}/streams/${tenant.streamIds[0]}`, headers: auth(tenant) },
    ],
  },
  {
    id: "creators",
    label: "GET /creators",
    requests: (target) => [{ method: "GET", path: `${target.prefix}/creators` }],
  },
  {
    // Each connection creates a stream, then ends the one it created; both requests count.
    id: "cycle",
    label: "POST + DELETE /streams/{id}",
    requests: (target, tenant) => [
      {
        method: "POST",
        path: `${target.prefix}/streams`,
        headers: { ...auth(tenant), "content-type": "application/json" },
        body: streamBody(tenant.creatorId),
        onResponse: (status, body, context) => {
          context.id = status === 201 ? (JSON.parse(body) as { stream_id: string }).stream_id : "not-created";
        },
      },
      {
        method: "DELETE",
        headers: auth(tenant),
        setupRequest: (request, context) => ({ ...request, path: `${target.prefix}/streams/${String(context.id)}` }),
      },
    ],
  },
];

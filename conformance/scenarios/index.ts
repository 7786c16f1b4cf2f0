import type { Scenario } from "../scenario.ts";
import { authScenarios } from "./auth.ts";
import { deliveryScenarios } from "./deliveries.ts";
import { edgeScenarios } from "./edge.ts";
import { errorScenarios } from "./errors.ts";
import { idempotencyScenarios } from "./idempotency.ts";
import { listenScenarios } from "./listen.ts";
import { logScenarios } from "./logs.ts";
import { mockScenarios } from "./mock.ts";
import { publicScenarios } from "./public.ts";
import { separationScenarios } from "./separation.ts";
import { streamScenarios } from "./streams.ts";
import { testClockScenarios } from "./test-clock.ts";
import { webhookScenarios } from "./webhooks.ts";

/** Every scenario, in the order the report lists them. */
export const SCENARIOS: readonly Scenario[] = [
  ...publicScenarios,
  ...edgeScenarios,
  ...authScenarios,
  ...streamScenarios,
  ...webhookScenarios,
  ...listenScenarios,
  ...logScenarios,
  ...separationScenarios,
  ...errorScenarios,
  ...idempotencyScenarios,
  ...deliveryScenarios,
  ...testClockScenarios,
  ...mockScenarios,
];

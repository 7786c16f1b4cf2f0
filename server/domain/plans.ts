import type { Plan } from "./types.ts";

/** Plans, lowest first. */
export const PLANS = ["free", "starter", "growth", "enterprise"] as const satisfies readonly Plan[];

const PRICE_PER_MINUTE_CENTS: Record<Plan, number | null> = { free: null, starter: null, growth: 30, enterprise: 20 };
const DEFAULT_PLAN_MINUTES: Record<Plan, number> = { free: 0, starter: 0, growth: 1000, enterprise: 10000 };

/** Live keys need the Growth plan or above. */
export function planAllowsLiveKeys(plan: Plan): boolean {
  return PLANS.indexOf(plan) >= PLANS.indexOf("growth");
}

export function pricePerMinuteCents(plan: Plan): number {
  const price = PRICE_PER_MINUTE_CENTS[plan];
  if (price === null) throw new Error(`plan ${plan} has no streaming price`);
  return price;
}

export function defaultPlanMinutes(plan: Plan): number {
  return DEFAULT_PLAN_MINUTES[plan];
}

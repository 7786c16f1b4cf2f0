// Type-level tests, checked by `tsc --noEmit` (npm run lint): the server takes its error codes
// and value sets from generated/ (the contract), and each table that maps them names every one,
// so a change to openapi.yaml the server does not follow fails compilation, not a partner.
import { expectTypeOf } from "vitest";
import type { PLANS } from "./domain/plans.ts";
import type { Plan, Role } from "./domain/types.ts";
import type { ERRORS, ErrorCode } from "./domain/errors.ts";
import type { DASHBOARD_ROLES } from "../contract/operations.ts";

// The error catalogue has exactly the contract's codes: one added or dropped there fails here.
expectTypeOf<keyof typeof ERRORS>().toEqualTypeOf<ErrorCode>();
// Every plan of the contract is listed (and priced: plans.ts's tables are Record<Plan, …>).
expectTypeOf<(typeof PLANS)[number]>().toEqualTypeOf<Plan>();
// The roles x-required-role ranks are the contract's roles, each once.
expectTypeOf<(typeof DASHBOARD_ROLES)[number]>().toEqualTypeOf<Role>();

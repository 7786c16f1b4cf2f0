import type { SecretBox } from "../../domain/secret-box.ts";
import type { Database } from "../../store/database.ts";
import type { Member } from "../../domain/types.ts";
import type { Clock } from "../context.ts";

export type { Member, Role } from "../../domain/types.ts";

/** What the members' services need: the database, the clock and the session and TOTP settings. */
export interface MembersContext {
  db: Database;
  clock: Clock;
  sessionIdleMs: number;
  sessionAbsoluteMs: number;
  /** Seals TOTP secrets at rest (TOTP_ENCRYPTION_KEY). */
  totpBox: SecretBox;
}

/** A signed-in member acting, from the client address of their request. */
export type MemberActor = { member: Member; address: string };
/** The operator (its API and CLI), from the client address of its request. */
export type OperatorActor = { operator: true; address: string };

/**
 * Who did something, for the audit log: a signed-in member, the operator, or a client not signed
 * in; each with the client address of the request (`http/client-address.ts`), which every entry
 * records.
 */
export type Actor = MemberActor | OperatorActor | { address: string };

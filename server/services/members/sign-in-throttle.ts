/**
 * The sign-in throttle (docs/dashboard.md, "Sign-in throttling"): every password check is
 * reserved in the database before it runs, per (account, address) with growing waits, and per
 * account under a ceiling that slows guessing from many addresses without ever refusing the first
 * attempt of an address that has not failed on the account.
 */
import type { Queryable } from "../../store/database.ts";
import {
  type Backoff,
  clearAccountAttempts,
  clearAttempts,
  forgetStaleAttempts,
  releaseAttempt,
  reserveAttempt,
} from "../../store/sign-in-throttle.ts";

const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;
/** One client against one account: 5 attempts, then waits of 1 s doubling up to 15 minutes. */
export const PAIR_BACKOFF: Backoff = { free: 5, baseMs: 1000, maxMs: 15 * 60_000, forgetAfterMs: FORGET_AFTER_MS };
/** The account from every address together: 10 attempts, then waits of 1 s doubling up to 15 minutes. */
export const ACCOUNT_BACKOFF: Backoff = { free: 10, baseMs: 1000, maxMs: 15 * 60_000, forgetAfterMs: FORGET_AFTER_MS };
/** What the first attempt of a new address waits while the account is over its ceiling. */
export const NEW_ADDRESS_SLOWDOWN_MS = 1000;

const pairPrefix = (email: string) => `pair:${email} `;
const pairSubject = (email: string, address: string) => `${pairPrefix(email)}${address}`;
const accountSubject = (email: string) => `account:${email}`;

export type Attempt =
  | {
      allowed: true;
      /** The account is over its ceiling and this address never failed on it: checked, after this wait. */
      slowdownMs: number;
      /** The account's reservation, given back on success (the pair's is cleared). */
      accountReserved: boolean;
    }
  | {
      allowed: false;
      /** Whose wait refused it: this address's on the account, or the account's ceiling. */
      by: "address" | "account";
      until: Date;
      failures: number;
      /** The first refusal since the last reserved attempt (audited once, not per request). */
      firstRefusal: boolean;
    };

/** Reserves a password check for `email` from `address` at `now`. */
export async function reserveCheck(db: Queryable, email: string, address: string, now: Date): Promise<Attempt> {
  const pair = await reserveAttempt(db, pairSubject(email, address), now, PAIR_BACKOFF);
  if (!pair.reserved)
    return {
      allowed: false,
      by: "address",
      until: pair.nextAttemptAt,
      failures: pair.failures,
      firstRefusal: pair.refused === 1,
    };
  const account = await reserveAttempt(db, accountSubject(email), now, ACCOUNT_BACKOFF);
  if (account.reserved) return { allowed: true, slowdownMs: 0, accountReserved: true };
  // Never refuse an address that has not failed on the account: the member at a new place.
  if (pair.failures === 1) return { allowed: true, slowdownMs: NEW_ADDRESS_SLOWDOWN_MS, accountReserved: false };
  await releaseAttempt(db, pairSubject(email, address));
  return {
    allowed: false,
    by: "account",
    until: account.nextAttemptAt,
    failures: account.failures,
    firstRefusal: account.refused === 1,
  };
}

/** A check that succeeded: this address's failures are forgotten (NIST SP 800-63B §5.2.2), the account's attempt given back. */
export async function checkSucceeded(db: Queryable, email: string, address: string, attempt: Attempt): Promise<void> {
  await clearAttempts(db, [pairSubject(email, address)]);
  if (attempt.allowed && attempt.accountReserved) await releaseAttempt(db, accountSubject(email));
}

/** A password that was right but still needs its second factor: the attempt is not counted. */
export async function checkIncomplete(db: Queryable, email: string, address: string, attempt: Attempt): Promise<void> {
  await releaseAttempt(db, pairSubject(email, address));
  if (attempt.allowed && attempt.accountReserved) await releaseAttempt(db, accountSubject(email));
}

/** An owner or the operator lifts the account's throttle, from every address. */
export function clearThrottle(db: Queryable, email: string): Promise<number> {
  return clearAccountAttempts(db, accountSubject(email), pairPrefix(email));
}

/** Forgets the subjects no attempt has touched for FORGET_AFTER_MS (the lifecycle sweeper's pass runs it). */
export function forgetOldSignInAttempts(db: Queryable, now: Date): Promise<number> {
  return forgetStaleAttempts(db, new Date(now.getTime() - FORGET_AFTER_MS), now);
}

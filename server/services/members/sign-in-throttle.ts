/**
 * The sign-in throttle (docs/dashboard.md, "Sign-in throttling"): every password check is
 * reserved in the database before it runs, per (account, client) with growing waits, and, unless
 * it comes from a browser known for the account (its device cookie), under the account's ceiling,
 * which bounds the checks from all other browsers together, whatever their number of addresses.
 * An account is a member (an email within one brand: throttleKey), so a member of another brand
 * with the same email, whoever made it, neither spends nor lifts this member's ceiling.
 */
import { addressBucket } from "../../domain/ip-address.ts";
import { randomToken, sha256Hex } from "../../domain/secrets.ts";
import type { Queryable } from "../../store/database.ts";
import {
  type Backoff,
  clearAccountAttempts,
  clearAttempts,
  deviceKnown,
  forgetStaleAttempts,
  forgetStaleDevices,
  recordDevice,
  releaseAttempt,
  reserveAttempt,
} from "../../store/sign-in-throttle.ts";

const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;
/**
 * One client (a browser known for the account, or else an address: an IPv6 one by its /64) against
 * one account: 5 attempts, then waits of 1 s doubling up to 15 minutes.
 */
export const PAIR_BACKOFF: Backoff = { free: 5, baseMs: 1000, maxMs: 15 * 60_000, forgetAfterMs: FORGET_AFTER_MS };
/**
 * The account from every browser not known for it together, whatever their addresses (the ceiling):
 * 10 attempts, then waits of 1 s doubling up to 15 minutes.
 */
export const ACCOUNT_BACKOFF: Backoff = { free: 10, baseMs: 1000, maxMs: 15 * 60_000, forgetAfterMs: FORGET_AFTER_MS };

/** How long a browser stays known: its device cookie's lifetime, renewed by every sign-in. */
export const DEVICE_KEPT_MS = 365 * 24 * 60 * 60 * 1000;
/** The browsers kept per member; a sign-in from one more forgets the least recently used. */
export const DEVICES_PER_MEMBER = 20;
/** What a device token looks like (randomToken: 32 bytes, base64url); anything else is not ours. */
const DEVICE_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Whose throttle: the member's (by id), or, for an email no member has, the email's, so made-up
 * emails are throttled (and timed) like real ones.
 */
export function throttleKey(member: { id: string } | null, email: string): string {
  return member ? member.id : `email:${email}`;
}
const memberOfKey = (key: string): string | null => (key.startsWith("email:") ? null : key);

const pairPrefix = (key: string) => `pair:${key} `;
/** The client of a pair: the known browser (by its token's hash), or else the address's bucket. */
const pairSubject = (key: string, address: string, knownDevice: string | null) =>
  `${pairPrefix(key)}${knownDevice === null ? addressBucket(address) : `device:${knownDevice}`}`;
const accountSubject = (key: string) => `account:${key}`;

export type Attempt =
  | {
      allowed: true;
      /** The device token's hash when the browser is known for the account (then the ceiling did not count it). */
      knownDevice: string | null;
      /** The account's reservation, given back on success (the pair's is cleared). */
      accountReserved: boolean;
    }
  | {
      allowed: false;
      /** Whose wait refused it: this address's or known browser's on the account, or the account's ceiling. */
      by: "address" | "device" | "account";
      until: Date;
      failures: number;
      /** The first refusal since the last reserved attempt (audited once, not per request). */
      firstRefusal: boolean;
    };

/** The hash of a device token the browser sent, if the member of `key` signed in on that browser. */
async function knownDeviceOf(
  db: Queryable,
  key: string,
  device: string | undefined,
  now: Date,
): Promise<string | null> {
  const memberId = memberOfKey(key);
  if (!memberId || !device || !DEVICE_TOKEN.test(device)) return null;
  const hash = sha256Hex(device);
  return (await deviceKnown(db, memberId, hash, new Date(now.getTime() - DEVICE_KEPT_MS))) ? hash : null;
}

/**
 * Reserves a password check of the account `key` (throttleKey) from `address` at `now`, the browser
 * carrying the device token `device` if any. A browser known for the account waits only on its own
 * pair; any other attempt also takes a place under the account's ceiling, and is refused while the
 * ceiling waits.
 */
export async function reserveCheck(
  db: Queryable,
  key: string,
  address: string,
  now: Date,
  device?: string,
): Promise<Attempt> {
  const knownDevice = await knownDeviceOf(db, key, device, now);
  const pair = pairSubject(key, address, knownDevice);
  const reserved = await reserveAttempt(db, pair, now, PAIR_BACKOFF);
  if (!reserved.reserved)
    return {
      allowed: false,
      by: knownDevice === null ? "address" : "device",
      until: reserved.nextAttemptAt,
      failures: reserved.failures,
      firstRefusal: reserved.refused === 1,
    };
  if (knownDevice !== null) return { allowed: true, knownDevice, accountReserved: false };
  const account = await reserveAttempt(db, accountSubject(key), now, ACCOUNT_BACKOFF);
  if (account.reserved) return { allowed: true, knownDevice, accountReserved: true };
  await releaseAttempt(db, pair);
  return {
    allowed: false,
    by: "account",
    until: account.nextAttemptAt,
    failures: account.failures,
    firstRefusal: account.refused === 1,
  };
}

/** A check that succeeded: this client's failures are forgotten (NIST SP 800-63B §5.2.2), the account's attempt given back. */
export async function checkSucceeded(db: Queryable, key: string, address: string, attempt: Attempt): Promise<void> {
  if (!attempt.allowed) return;
  await clearAttempts(db, [pairSubject(key, address, attempt.knownDevice)]);
  if (attempt.accountReserved) await releaseAttempt(db, accountSubject(key));
}

/** A password that was right but still needs its second factor: the attempt is not counted. */
export async function checkIncomplete(db: Queryable, key: string, address: string, attempt: Attempt): Promise<void> {
  if (!attempt.allowed) return;
  await releaseAttempt(db, pairSubject(key, address, attempt.knownDevice));
  if (attempt.accountReserved) await releaseAttempt(db, accountSubject(key));
}

/** An owner or the operator lifts the member's throttle, from every address and browser. */
export function clearThrottle(db: Queryable, memberId: string): Promise<number> {
  return clearAccountAttempts(db, accountSubject(memberId), pairPrefix(memberId));
}

/**
 * A member signed in from this browser: it is known for the member from now on. The
 * browser's device token is kept (one browser, one token, whichever members sign in on it), or a
 * new one made; returned for the device cookie, of which only the hash is stored.
 */
export async function rememberDevice(
  db: Queryable,
  memberId: string,
  device: string | undefined,
  now: Date,
): Promise<string> {
  const token = device && DEVICE_TOKEN.test(device) ? device : randomToken();
  await recordDevice(db, memberId, sha256Hex(token), now, DEVICES_PER_MEMBER);
  return token;
}

/**
 * Forgets the subjects no attempt has touched for FORGET_AFTER_MS, and the browsers unused for
 * DEVICE_KEPT_MS (their cookie has expired); the lifecycle sweeper's pass runs it.
 */
export async function forgetOldSignInAttempts(db: Queryable, now: Date): Promise<number> {
  const attempts = await forgetStaleAttempts(db, new Date(now.getTime() - FORGET_AFTER_MS), now);
  return attempts + (await forgetStaleDevices(db, new Date(now.getTime() - DEVICE_KEPT_MS)));
}

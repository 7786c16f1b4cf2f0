/**
 * A brand's caps on what its members and the operator can create: usable API keys, open
 * invitations, members. Each is the maxItems of the list that shows it (generated/limits.ts), so
 * a list always has room for everything a brand may have. Every creation path calls these inside
 * its transaction: the brand lock (store/brand-lock.ts) makes creations of one brand count one at
 * a time, across processes on PostgreSQL too, so two at once cannot both take the last place.
 * Each check below expects the caller to hold that lock (lockBrandForCreation).
 */
import { brandCaps } from "../../generated/limits.ts";
import { ApiError } from "../domain/errors.ts";
import { lockBrand } from "../store/brand-lock.ts";
import type { Queryable } from "../store/database.ts";
import { usableKeyCount } from "../store/keys.ts";
import { openInvitationCount } from "../store/invitations.ts";
import { memberCount } from "../store/members.ts";

const plural = (count: number) => count.toLocaleString("en-US");

/** Locks the brand for a creation that the caps below then check; not_found when it does not exist. */
export async function lockBrandForCreation(tx: Queryable, brandId: string): Promise<void> {
  if (!(await lockBrand(tx, brandId))) throw new ApiError("not_found", `No brand with id ${brandId}.`);
}

/** Refuses a new key when the brand already has `brandCaps.keys` usable ones (both modes together). */
export async function refuseKeyOverCap(tx: Queryable, brandId: string, now: Date): Promise<void> {
  if ((await usableKeyCount(tx, brandId, now)) >= brandCaps.keys)
    throw new ApiError(
      "key_limit",
      `The brand already has ${plural(brandCaps.keys)} usable API keys, the most it may have; revoke one first.`,
    );
}

/** Refuses a new invitation when the brand's members or open invitations are at their caps. */
export async function refuseInvitationOverCap(tx: Queryable, brandId: string, now: Date): Promise<void> {
  await refuseMemberOverCap(tx, brandId);
  if ((await openInvitationCount(tx, brandId, now)) >= brandCaps.openInvitations)
    throw new ApiError(
      "invitation_limit",
      `The brand already has ${plural(brandCaps.openInvitations)} open invitations, the most it may have; revoke one first.`,
    );
}

/** Refuses a new member (an accepted invitation) when the brand already has `brandCaps.members`; the invitation stays open. */
export async function refuseMemberOverCap(tx: Queryable, brandId: string): Promise<void> {
  if ((await memberCount(tx, brandId)) >= brandCaps.members)
    throw new ApiError(
      "member_limit",
      `The brand already has ${plural(brandCaps.members)} members, the most it may have; remove one first.`,
    );
}

/**
 * The secrets a delivery may be verified with: one, or several while a secret is being rotated
 * (the old webhook's and the new one's, see the README's rotation recipe). Shared by both
 * verifiers; no crypto and no Node globals here.
 */

/** A webhook's signing secret (`whsec_…`), or several: a delivery passes when any of them signed it. */
export type WebhookSecrets = string | readonly string[];

/** `secrets` as a non-empty list, checked, with a message that says what to pass. */
export function secretList(secrets: unknown): readonly string[] {
  if (typeof secrets === "string") {
    if (secrets !== "") return [secrets];
    throw new TypeError(
      "secret must be the webhook's signing secret (whsec_…), returned once by webhooks.create(); got an empty string.",
    );
  }
  if (!Array.isArray(secrets)) {
    throw new TypeError(
      `secret must be the webhook's signing secret (whsec_…) or an array of them, got ${secrets === null ? "null" : typeof secrets}.`,
    );
  }
  if (secrets.length === 0) {
    throw new TypeError(
      "secret is an empty array: pass at least one signing secret (whsec_…). During a rotation pass both, e.g. [newSecret, oldSecret].",
    );
  }
  secrets.forEach((secret: unknown, index) => {
    if (typeof secret !== "string" || secret === "") {
      throw new TypeError(
        `secret[${index}] must be a signing secret (whsec_…), got ${secret === "" ? "an empty string" : typeof secret}.`,
      );
    }
  });
  return secrets as readonly string[];
}

import { readFileSync } from "node:fs";
import { passwordMaxLength } from "../../generated/limits.ts";

export const PASSWORD_MIN_LENGTH = 12;
/** The contract's, which refuses a longer one first (`invalid_fields`); checked here too for any other caller. */
export const PASSWORD_MAX_LENGTH = passwordMaxLength;

const BLOCKLIST_FILE = new URL("../data/common-passwords.txt", import.meta.url);

let blocklist: ReadonlySet<string> | undefined;

/** Common passwords (server/data/common-passwords.txt), lower case, read once. */
function commonPasswords(): ReadonlySet<string> {
  blocklist ??= new Set(
    readFileSync(BLOCKLIST_FILE, "utf8")
      .split("\n")
      .map((line) => line.trim().toLowerCase())
      .filter(Boolean),
  );
  return blocklist;
}

/**
 * Why a new password is refused, or null when it is acceptable: length in characters (code
 * points, so an emoji counts once) and the list of common passwords, compared case-insensitively.
 */
export function passwordProblem(password: string, { email }: { email?: string } = {}): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `The password must be at least ${PASSWORD_MIN_LENGTH} characters long.`;
  if (length > PASSWORD_MAX_LENGTH) return `The password must be at most ${PASSWORD_MAX_LENGTH} characters long.`;
  const lower = password.toLowerCase();
  if (commonPasswords().has(lower)) return "This password is on the list of common passwords; choose another.";
  if (email && containsEmail(lower, email.toLowerCase()))
    return "The password must not contain the email address or the part before its @.";
  return null;
}

/** The local part counts from 3 characters: a shorter one would refuse too many passwords by chance. */
const LOCAL_PART_MIN_LENGTH = 3;

function containsEmail(password: string, email: string): boolean {
  const local = email.split("@")[0] ?? "";
  return password.includes(email) || (local.length >= LOCAL_PART_MIN_LENGTH && password.includes(local));
}

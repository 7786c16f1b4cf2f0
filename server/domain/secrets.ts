import { createHash, randomBytes, randomInt } from "node:crypto";

/** A random token for a cookie, link or CSRF check: 32 bytes, base64url (43 characters). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** SHA-256, hex: what is stored of a random token (a session id, an invitation or recovery code). */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** A recovery code people can type: 10 characters of a-z and 2-9 without look-alikes, as `xxxxx-xxxxx`. */
export function recoveryCode(): string {
  const alphabet = "abcdefghjkmnpqrstuvwxyz23456789";
  const chars = Array.from({ length: 10 }, () => alphabet[randomInt(alphabet.length)]);
  return `${chars.slice(0, 5).join("")}-${chars.slice(5).join("")}`;
}

/** Emails compare case-insensitively (the local part too, as providers do in practice). */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Secrets the server must read back (TOTP secrets), sealed with AES-256-GCM under a key from the
 * environment. Stored as `enc:v1:<key id>:<iv>:<tag>:<ciphertext>` (base64url), the key id being
 * the first 8 hex digits of the key's SHA-256, so a value names the key that opens it and keys can
 * be rotated (docs/operators.md). Without a key, values are stored as they are.
 */
export interface SecretBox {
  seal(plain: string): string;
  open(stored: string): string;
  /** Whether the stored value is not sealed with the current key (plain, or an older key). */
  stale(stored: string): boolean;
}

const PREFIX = "enc:v1:";

export const keyId = (key: Buffer) => createHash("sha256").update(key).digest("hex").slice(0, 8);

export function secretBox({
  current,
  previous = [],
}: {
  current?: Buffer | undefined;
  previous?: Buffer[];
}): SecretBox {
  const keys = new Map([...previous, ...(current ? [current] : [])].map((key) => [keyId(key), key]));
  const currentId = current && keyId(current);
  return {
    seal(plain) {
      if (!current) return plain;
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", current, iv);
      const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), sealed].map((part) => part.toString("base64url"));
      return `${PREFIX}${currentId}:${parts.join(":")}`;
    },
    open(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      const [id, iv, tag, sealed] = stored.slice(PREFIX.length).split(":");
      const key = id && keys.get(id);
      if (!key || !iv || !tag || sealed === undefined)
        throw new Error(
          `A TOTP secret is sealed with key ${id}, which is neither TOTP_ENCRYPTION_KEY nor in TOTP_ENCRYPTION_KEYS_PREVIOUS.`,
        );
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(sealed, "base64url")), decipher.final()]).toString("utf8");
    },
    stale(stored) {
      if (!current) return false;
      return !stored.startsWith(`${PREFIX}${currentId}:`);
    },
  };
}

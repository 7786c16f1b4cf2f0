import { randomFillSync } from "node:crypto";

const ID_BYTES = 16;
const ID_HEX_DIGITS = ID_BYTES * 2;
const IDS_PER_FILL = 256;
const pool = Buffer.alloc(ID_BYTES * IDS_PER_FILL);
let poolHex = "";
let next = IDS_PER_FILL;

/**
 * A new request id: `req_` and 32 hex digits (128 random bits). Random bytes are drawn 4 KiB at a
 * time and hex-encoded in one piece, and each id is a slice of that text: a request pays for
 * neither a UUID (with its dashes removed) nor a hex conversion of its own.
 */
export function newRequestId(): string {
  if (next === IDS_PER_FILL) {
    randomFillSync(pool);
    poolHex = pool.toString("hex");
    next = 0;
  }
  const start = next * ID_HEX_DIGITS;
  next += 1;
  return `req_${poolHex.slice(start, start + ID_HEX_DIGITS)}`;
}

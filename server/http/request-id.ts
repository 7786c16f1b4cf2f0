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

/** An incoming `X-Request-Id` kept as the request's id: short, and safe to log and echo. */
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The id a request goes by: a well-formed incoming `X-Request-Id` (a proxy's or the client's
 * own) is kept, anything else gets a new `req_…` id.
 */
export function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === "string" && WELL_FORMED_REQUEST_ID.test(incoming) ? incoming : newRequestId();
}

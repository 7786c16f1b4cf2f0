import { once } from "node:events";
import type { Response } from "express";
import { describeSchemaErrors, type ValidateFunction } from "../../contract/schemas.ts";
import { ResponseInvalid } from "./contract-validation.ts";
import { keepAnswerText } from "../observability/request-log.ts";

function check(validate: ValidateFunction, value: unknown, what: string): void {
  if (!validate(value))
    throw new ResponseInvalid(`${what} does not match the contract: ${describeSchemaErrors(validate.errors)}`);
}

/**
 * Sends `head` as JSON with its last property, an empty array, filled from `batches` as they are
 * read: the same bytes `res.json` would send for the whole object, with one batch in memory at a
 * time, and the writing waits for the client to take each batch. The head (with its array empty)
 * and every item are validated against the contract first, as the contract validator does for
 * `res.json`. A failure before the first byte is thrown (the error handler answers it); after it,
 * the connection is closed, so the client sees a truncated body, never a complete-looking wrong
 * one, and the error is thrown for the log.
 */
export async function sendStreamedJson<Item>(
  res: Response,
  {
    head,
    validateHead,
    batches,
    validateItem,
  }: { head: object; validateHead: ValidateFunction; batches: AsyncIterable<Item[]>; validateItem: ValidateFunction },
): Promise<void> {
  check(validateHead, head, "The answer");
  const text = JSON.stringify(head);
  if (!text.endsWith("[]}"))
    throw new ResponseInvalid("The streamed array must be the answer's last property, and empty.");
  const iterator = batches[Symbol.asyncIterator]();
  try {
    // The first batch is read before anything is sent, so a failure there is still a clean 500.
    let next = await iterator.next();
    res.status(200).type("application/json");
    let chunk = text.slice(0, -2);
    let first = true;
    while (!next.done) {
      for (const item of next.value) check(validateItem, item, "An item of the answer");
      // One JSON.stringify per batch (half the time of one per item), its brackets dropped.
      if (next.value.length > 0) {
        chunk += (first ? "" : ",") + JSON.stringify(next.value).slice(1, -1);
        first = false;
      }
      keepAnswerText(res, chunk);
      if (!res.write(chunk)) await drained(res);
      if (res.destroyed) return;
      chunk = "";
      next = await iterator.next();
    }
    keepAnswerText(res, `${chunk}]}`);
    res.end(`${chunk}]}`);
  } catch (error) {
    await iterator.return?.();
    if (res.headersSent) res.destroy();
    throw error;
  }
}

/** Resolves when the client has taken what was written, or has gone. */
async function drained(res: Response): Promise<void> {
  const controller = new AbortController();
  try {
    await Promise.race([
      once(res, "drain", { signal: controller.signal }),
      once(res, "close", { signal: controller.signal }),
    ]);
  } finally {
    controller.abort();
  }
}

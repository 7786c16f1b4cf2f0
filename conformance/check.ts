/** Assertions for scenarios: they throw with the request and the answer in the message. */
import { describeExchange, type Exchange } from "./client.ts";

export class CheckFailed extends Error {
  override name = "CheckFailed";
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailed(message);
}

function answered(exchange: Exchange): string {
  return `${describeExchange(exchange)}: ${exchange.text.slice(0, 200)}`;
}

export function expectStatus(exchange: Exchange, status: number): void {
  check(exchange.status === status, `expected ${status}, got ${answered(exchange)}`);
}

/** The status and the `error.code` of the envelope. */
export function expectError(exchange: Exchange, status: number, code: string): void {
  check(
    exchange.status === status && exchange.body?.error?.code === code,
    `expected ${status} ${code}, got ${answered(exchange)}`,
  );
}

export function expectEqual<T>(actual: T, expected: T, what: string): void {
  check(
    JSON.stringify(actual) === JSON.stringify(expected),
    `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`,
  );
}

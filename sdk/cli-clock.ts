/**
 * `live-stream-hosting clock` and `clock advance <duration>`: the brand's test clock, read or moved
 * forward, so that a time-out, a stream's scheduled end or a failing receiver's retries happen at
 * once in test mode. Test keys only.
 */
import { durationMs } from "./cli-deliveries.ts";
import type { LiveStreamClient, TestClock } from "./client.ts";

export type ClockCommand = { action: "show" } | { action: "advance"; seconds: number };

/** How far one advance may move the clock: 7 days (the contract's `TestClockAdvance.seconds` maximum). */
export const MAX_ADVANCE_SECONDS = 604_800;

/** `90s`, `30m`, `2h`, `7d`: whole seconds from 1 to 7 days; null when it is none. */
export function advanceSecondsOf(text: string): number | null {
  const ms = durationMs(text);
  if (ms === null) return null;
  const seconds = ms / 1000;
  return seconds >= 1 && seconds <= MAX_ADVANCE_SECONDS ? seconds : null;
}

/** `2h`, `1d 2h 3m 4s`, `0s`: whole seconds as the largest units that add up to them. */
export function formatSeconds(total: number): string {
  const parts: string[] = [];
  let left = total;
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    const count = Math.floor(left / size);
    left -= count * size;
    if (count > 0) parts.push(`${count}${unit}`);
  }
  return parts.length > 0 ? parts.join(" ") : "0s";
}

function clockLine(clock: TestClock): string {
  return `${clock.now}, ${formatSeconds(clock.offset_seconds)} ahead of real time (offset ${clock.offset_seconds} s)`;
}

/** Runs one clock command, printing the clock as it is (after the advance). */
export async function runClock(
  client: LiveStreamClient,
  command: ClockCommand,
  io: { out(line: string): void },
): Promise<void> {
  if (command.action === "show") {
    io.out(`Test clock: ${clockLine(await client.testClock.get())}`);
    return;
  }
  const clock = await client.testClock.advance(command.seconds);
  io.out(`Advanced the test clock by ${formatSeconds(command.seconds)}: ${clockLine(clock)}`);
  io.out("Stream transitions due by then have happened; webhook attempts due by then follow within seconds.");
}

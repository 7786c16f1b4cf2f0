/**
 * Changes the gate reports as breaking that a reviewer has found to break no client, listed with
 * the reason in contract/accepted-changes.yaml. Each entry applies to comparisons with one
 * released version (`base`), so the list lapses at the next release. An entry matches one change
 * exactly: the same operation, JSON pointer and message, so the same place changed another way
 * (a bound lowered further) is breaking again.
 */
import { existsSync, readFileSync } from "node:fs";
import { parseYamlText } from "../../contract/load.ts";
import type { Change } from "./changes.ts";

export interface AcceptedChange {
  where: string;
  pointer: string;
  change: string;
  why: string;
}

/** The entries of `file` for comparisons with released version `base` (none when the file is absent). */
export function acceptedChanges(file: string, base: string): AcceptedChange[] {
  if (!existsSync(file)) return [];
  const list = parseYamlText(readFileSync(file, "utf8")) as { base?: unknown; changes?: AcceptedChange[] } | null;
  if (!list || list.base !== base) return [];
  for (const entry of list.changes ?? []) {
    if (![entry.where, entry.pointer, entry.change, entry.why].every((value) => typeof value === "string" && value !== "")) {
      throw new Error(`${file}: every accepted change needs where, pointer, change and why: ${JSON.stringify(entry)}`);
    }
  }
  return list.changes ?? [];
}

export function acceptanceOf(change: Change, accepted: readonly AcceptedChange[]): AcceptedChange | undefined {
  return accepted.find((entry) => entry.where === change.where && entry.pointer === change.pointer && entry.change === change.message);
}

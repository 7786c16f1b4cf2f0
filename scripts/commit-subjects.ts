import { execFileSync } from "node:child_process";

/**
 * Commit subjects of at most 72 characters, the detail in the body (docs/development.md). Checked for
 * commits made since the rule was adopted; earlier history is left as it is rather than rewritten.
 */
const LIMIT = 72;
const ADOPTED = "2026-11-26T01:00:00Z";

let log: string;
try {
  log = execFileSync("git", ["log", `--since=${ADOPTED}`, "--format=%h%x09%s"], { encoding: "utf8" });
} catch (error) {
  // Outside CI a copy without history (a source archive) is fine; in CI it would hide every subject.
  const reason = `no git history here (${(error as Error).message.split("\n")[0]})`;
  if (process.env.CI) {
    console.error(`commit subjects cannot be checked: ${reason}`);
    process.exit(1);
  }
  console.log(`commit subjects not checked: ${reason}`);
  process.exit(0);
}
const commits = log
  .split("\n")
  .filter(Boolean)
  .map((line) => ({ hash: line.slice(0, line.indexOf("\t")), subject: line.slice(line.indexOf("\t") + 1) }));
const long = commits.filter(({ subject }) => subject.length > LIMIT);
for (const { hash, subject } of long)
  console.error(`${hash}: subject of ${subject.length} characters (at most ${LIMIT}): ${subject}`);
if (long.length > 0) process.exit(1);
console.log(`${commits.length} commit subjects since ${ADOPTED}: all at most ${LIMIT} characters`);

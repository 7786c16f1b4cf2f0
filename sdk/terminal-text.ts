/**
 * Text made safe to print on a terminal. What the CLIs print comes partly from elsewhere (a
 * webhook URL or key name someone registered, a receiver's answer, an error message), and a
 * terminal obeys control characters in it: ESC starts sequences that recolour, move the cursor,
 * retitle the window or make an OSC 8 link whose text hides its target; BEL rings; CR overwrites
 * the line. Every such character, and the bidirectional overrides that reorder what is shown, is
 * printed as a visible escape instead (`\x1b`, `\u202e`); line feeds and tabs are kept, as the
 * CLIs' own multi-line output needs them. The one escaping rule of every CLI of this repository
 * (the partner CLI `live-stream-hosting` and the operator's `npm run admin`).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function visible(character: string): string {
  const code = character.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, visible);
}

/**
 * `value` as JSON that is terminal-safe and still valid JSON (for `--json` output): JSON.stringify
 * escapes C0 controls itself, and every other unsafe character (DEL, C1, the bidirectional
 * overrides) becomes a JSON escape (`\u0085`), which terminalSafe then leaves alone. UNSAFE
 * characters only ever occur inside JSON's strings, where such an escape is valid.
 */
export function terminalSafeJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    UNSAFE,
    (character) => `\\u${character.codePointAt(0)!.toString(16).padStart(4, "0")}`,
  );
}

/** The printing functions of a CLI, each line made terminal-safe before it is written. */
export function terminalSafeOutput<T extends { out(line: string): void; err(line: string): void }>(io: T): T {
  return {
    ...io,
    out: (line: string) => io.out(terminalSafe(line)),
    err: (line: string) => io.err(terminalSafe(line)),
  };
}

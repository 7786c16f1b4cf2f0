import { describe, expect, it } from "vitest";
import { terminalSafe, terminalSafeOutput } from "./terminal-text.ts";

describe("terminalSafe", () => {
  it("prints an OSC 8 link and other escape sequences as visible escapes", () => {
    const link = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\";
    expect(terminalSafe(link)).toBe("\\x1b]8;;https://evil.example/\\x1b\\click\\x1b]8;;\\x1b\\");
    expect(terminalSafe("ring\x07 clear\x1b[2J back\r csi\u009b2J del\x7f nul\x00")).toBe(
      "ring\\x07 clear\\x1b[2J back\\x0d csi\\x9b2J del\\x7f nul\\x00",
    );
  });

  it("escapes bidirectional overrides, which reorder what is shown", () => {
    expect(terminalSafe("invoice\u202Etxt.exe")).toBe("invoice\\u202etxt.exe");
  });

  it("keeps line feeds, tabs and every printable character", () => {
    const text = "line one\n\tline two: café, 日本, emoji 🎥, \\x1b as text";
    expect(terminalSafe(text)).toBe(text);
  });

  it("terminalSafeOutput escapes both streams", () => {
    const lines: string[] = [];
    const io = terminalSafeOutput({
      out: (line: string) => lines.push(`out ${line}`),
      err: (line: string) => lines.push(`err ${line}`),
    });
    io.out("a\x1bb");
    io.err("c\x07d");
    expect(lines).toEqual(["out a\\x1bb", "err c\\x07d"]);
  });
});

import { describe, expect, it } from "vitest";
import { memberSessions } from "../../generated/limits.ts";
import { deviceOf, keptUserAgent } from "./user-agent.ts";

describe("deviceOf", () => {
  it.each([
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
      "Chrome 131 on Windows",
    ],
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70",
      "Microsoft Edge 131 on macOS",
    ],
    ["Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox 128 on Linux"],
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15",
      "Safari 17 on macOS",
    ],
    [
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
      "Safari 17 on iPhone",
    ],
    [
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
      "Chrome 131 on iPhone",
    ],
    [
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36",
      "Chrome 131 on Android",
    ],
    [
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.6778.33 Safari/537.36",
      "Chrome 131 on Linux",
    ],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0",
      "Opera 115 on Windows",
    ],
    ["curl/8.5.0", "Unknown browser"],
    ["something else entirely", "Unknown browser"],
    [
      "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
      "Chrome 131 on Chrome OS",
    ],
    [
      "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
      "Safari 17 on iPad",
    ],
  ])("names %s", (agent, device) => {
    expect(deviceOf(agent)).toBe(device);
  });

  it("stays short whatever the header says", () => {
    expect(deviceOf(`Mozilla/5.0 (Windows NT 10.0) Chrome/${"9".repeat(400)}`)).toBe("Chrome 99999 on Windows");
  });

  it("says so when there was no User-Agent", () => {
    expect(deviceOf(null)).toBe("Unknown device");
  });
});

describe("keptUserAgent", () => {
  it("keeps the header trimmed, cut to the contract's bound, and nothing for none", () => {
    expect(keptUserAgent("  curl/8.5.0 ")).toBe("curl/8.5.0");
    expect(keptUserAgent("x".repeat(2000))).toHaveLength(memberSessions.userAgentMaxLength);
    expect([keptUserAgent(undefined), keptUserAgent("   ")]).toEqual([null, null]);
  });
});

import { memberSessions } from "../../generated/limits.ts";

/**
 * The `User-Agent` a session keeps: the header as sent, trimmed, cut to the contract's bound
 * (DashboardSessionInfo `user_agent`); null when there was none.
 */
export function keptUserAgent(header: string | undefined): string | null {
  const value = header?.trim();
  return value ? value.slice(0, memberSessions.userAgentMaxLength) : null;
}

/** Browsers by their marks, most specific first: Edge and Opera also say "Chrome", Chrome also says "Safari". */
const BROWSERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/(\d{1,5})/, "Edge"],
  [/\bOPR\/(\d{1,5})/, "Opera"],
  [/\bSamsungBrowser\/(\d{1,5})/, "Samsung Internet"],
  [/\b(?:Firefox|FxiOS)\/(\d{1,5})/, "Firefox"],
  [/\bHeadlessChrome\/(\d{1,5})/, "Headless Chrome"],
  [/\b(?:Chrome|CriOS|Chromium)\/(\d{1,5})/, "Chrome"],
  [/\bVersion\/(\d{1,5})[^ ]* (?:Mobile\/\S+ )?Safari\//, "Safari"],
  [/^curl\/(\d{1,5})/, "curl"],
];

/** Systems by their marks, most specific first: iOS and Android also say "like Mac OS X" and "Linux". */
const SYSTEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\biPhone\b/, "iPhone"],
  [/\biPad\b/, "iPad"],
  [/\bAndroid\b/, "Android"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bWindows\b/, "Windows"],
  [/\bMacintosh\b|\bMac OS X\b/, "macOS"],
  [/\bLinux\b/, "Linux"],
];

/**
 * A device people recognise, from a `User-Agent`: the browser with its major version and the
 * system ("Firefox 128 on Windows", "Safari 17 on iPhone"); "Unknown device" without one.
 */
export function deviceOf(userAgent: string | null): string {
  if (!userAgent) return "Unknown device";
  const browser = BROWSERS.map(([mark, name]) => [mark.exec(userAgent), name] as const).find(([found]) => found);
  const system = SYSTEMS.find(([mark]) => mark.test(userAgent))?.[1];
  const named = browser ? `${browser[1]} ${browser[0]![1]}` : "Unknown browser";
  return system ? `${named} on ${system}` : named;
}

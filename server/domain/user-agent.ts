import Bowser from "bowser";
import { memberSessions } from "../../generated/limits.ts";

/**
 * The `User-Agent` a session keeps: the header as sent, trimmed, cut to the contract's bound
 * (DashboardSessionInfo `user_agent`); null when there was none.
 */
export function keptUserAgent(header: string | undefined): string | null {
  const value = header?.trim();
  return value ? value.slice(0, memberSessions.userAgentMaxLength) : null;
}

/** The system a person names their device by: the model where it is one (iPhone, iPad), else the OS. */
function systemOf({ os, platform }: Bowser.Parser.ParsedResult): string | undefined {
  if (platform.model === "iPhone" || platform.model === "iPad") return platform.model;
  return os.name || undefined;
}

/**
 * A device people recognise, from a `User-Agent` (read by bowser): the browser with its major
 * version and the system ("Firefox 128 on Windows", "Safari 17 on iPhone"); "Unknown device"
 * without one. A version is cut to 5 digits, so a made-up header cannot make the name long.
 */
export function deviceOf(userAgent: string | null): string {
  if (!userAgent) return "Unknown device";
  const parsed = Bowser.parse(userAgent);
  const { name, version } = parsed.browser;
  const major = version?.split(".")[0]?.slice(0, 5);
  const named = name ? (major ? `${name} ${major}` : name) : "Unknown browser";
  const system = systemOf(parsed);
  return system ? `${named} on ${system}` : named;
}

/**
 * The vertical rule of POST /streams (spec: a stream's vertical is its brand's; igaming brands
 * stream to kick, youtube and twitch only). One place for the server and the mock.
 */
import type { Vertical } from "./types.ts";

/** Platforms an igaming brand may stream to. */
export const IGAMING_PLATFORMS: readonly string[] = ["kick", "youtube", "twitch"];

/** The platforms a brand of `vertical` may stream to, or undefined for every platform. */
export function platformsOf(vertical: Vertical): readonly string[] | undefined {
  return vertical === "igaming" ? IGAMING_PLATFORMS : undefined;
}

/** Why a start does not fit the brand's vertical (`403 vertical_mismatch`'s message), or undefined. */
export function verticalProblem(
  brandVertical: Vertical,
  input: { vertical?: Vertical | undefined; platform: string },
): string | undefined {
  if (input.vertical !== undefined && input.vertical !== brandVertical)
    return `vertical "${input.vertical}" differs from the brand's vertical "${brandVertical}".`;
  const platforms = platformsOf(brandVertical);
  if (platforms && !platforms.includes(input.platform))
    return `platform "${input.platform}" is not permitted for ${brandVertical} brands; use ${platforms.slice(0, -1).join(", ")} or ${platforms.at(-1)}.`;
  return undefined;
}

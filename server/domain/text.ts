/**
 * `text` cut to at most `max` characters, counted as JSON Schema's maxLength counts them (code
 * points, so a surrogate pair is one and is never split), ending in "…" when it was cut.
 */
export function atMostCharacters(text: string, max: number): string {
  if (text.length <= max) return text;
  const characters = Array.from(text);
  if (characters.length <= max) return text;
  return `${characters.slice(0, max - 1).join("")}…`;
}

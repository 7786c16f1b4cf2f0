/** Values derived from an id or a seed that are the same on every answer of the mock. */

const HOUR = 3_600_000;

/** How long ago the stream with this id was created: 2 to 8 hours, the same on every answer. */
export function createdAgoMs(id: string): number {
  return 2 * HOUR + (hash(id) % (6 * HOUR));
}

/** A small stable hash (FNV-1a), so the same id gets the same timeline on every answer. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

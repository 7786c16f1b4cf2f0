/**
 * One difference between the released contract and the current one, as a client sees it.
 * `breaking`: a client written against the released contract can fail. `compatible`: it cannot
 * (something added, or a promise kept with room to spare).
 */
export interface Change {
  severity: "breaking" | "compatible";
  /** The operation or webhook, as "GET /streams/{id}" or "webhook stream.started". */
  where: string;
  /** JSON pointer into the dereferenced current contract (the released one where it is gone). */
  pointer: string;
  message: string;
}

/** Who writes the data a schema describes: the client (requests) or the server (responses, webhook deliveries). */
export type Writer = "client" | "server";

/** Appends an RFC 6901 token to a pointer. */
export function child(pointer: string, token: string | number): string {
  return `${pointer}/${String(token).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/**
 * The severity of a change that lets through fewer values (`narrows`) or more (`widens`) than
 * before: a client that writes the data breaks when the accepted set shrinks, a client that reads
 * it breaks when it grows.
 */
export function severityOf(writer: Writer, { narrows, widens }: { narrows: boolean; widens: boolean }): Change["severity"] {
  return (writer === "client" && narrows) || (writer === "server" && widens) ? "breaking" : "compatible";
}

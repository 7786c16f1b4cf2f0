import { once } from "node:events";
import { connect } from "node:net";

export interface RawExchange {
  /** Everything the server wrote, as Latin-1 text. */
  text: string;
  /** Whether the server closed the connection within the wait. */
  closed: boolean;
  ms: number;
}

/**
 * Writes `raw` on a fresh connection to `port` and collects what comes back until the server
 * closes the connection, or `waitMs` has passed (then `closed` is false): the bytes a client
 * sends, exactly, which no HTTP client library would.
 */
export async function rawExchange(
  port: number,
  raw: string | Buffer,
  { end = false, waitMs = 10_000 } = {},
): Promise<RawExchange> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  const started = Date.now();
  let text = "";
  socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
  socket.on("error", () => undefined);
  socket.write(raw);
  if (end) socket.end();
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    once(socket, "close").then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs))),
  ]);
  clearTimeout(timer);
  socket.destroy();
  return { text, closed, ms: Date.now() - started };
}

export interface RawAnswer {
  status: number;
  /** The status line and header lines, as received. */
  head: string;
  headers: Map<string, string>;
  body: any;
  /** The body as received, when it is not JSON. */
  bodyText: string;
}

/** The final answer in `text`: interim `1xx` answers are skipped; a JSON body is parsed. */
export function parseAnswer(text: string): RawAnswer {
  let rest = text;
  while (/^HTTP\/1\.[01] 1\d\d /.test(rest)) rest = rest.slice(rest.indexOf("\r\n\r\n") + 4);
  const split = rest.indexOf("\r\n\r\n");
  const head = split === -1 ? rest : rest.slice(0, split);
  const bodyText = split === -1 ? "" : rest.slice(split + 4);
  const headers = new Map<string, string>();
  for (const line of head.split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  let body: unknown;
  try {
    body = bodyText ? JSON.parse(bodyText) : undefined;
  } catch {
    body = undefined;
  }
  return { status: Number(head.split(" ")[1]), head, headers, body, bodyText };
}

/**
 * The responses the real server gave, captured once by the benchmark and replayed by the ceiling
 * servers, so every target sends the same bytes.
 */
export interface CapturedResponse {
  method: string;
  /** Express route pattern, e.g. `/api/v1/streams/:id`. */
  route: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Printed on stdout, on one line, once a bench server listens. */
export function announce(port: number): void {
  console.log(JSON.stringify({ port }));
}

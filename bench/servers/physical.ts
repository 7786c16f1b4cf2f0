import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { announce, type CapturedResponse } from "./captured.ts";

/** The physical ceiling: bare node:http writing the captured bytes, nothing else. */
const captured = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as CapturedResponse[];

const routes = captured.map((response) => ({
  method: response.method,
  matcher: new RegExp(`^${response.route.replace(/:[^/]+/g, "[^/]+")}$`),
  status: response.status,
  headers: { ...response.headers, "content-type": "application/json; charset=utf-8" },
  bytes: Buffer.from(response.body),
}));

const server = createServer((req, res) => {
  req.resume();
  const path = (req.url ?? "/").split("?")[0]!;
  const route = routes.find((candidate) => candidate.method === req.method && candidate.matcher.test(path));
  if (!route) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(route.status, { ...route.headers, "content-length": route.bytes.length }).end(route.bytes);
});

server.listen(0, "127.0.0.1", () => announce((server.address() as AddressInfo).port));
process.once("SIGTERM", () => server.close(() => process.exit(0)));

import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import express from "express";
import { pino } from "pino";
import { Counter, Histogram, Registry } from "prom-client";
import { announce, type CapturedResponse } from "./captured.ts";

/**
 * The lean reference: the same kinds of per-request work as the real server, on bare Express 5,
 * answering the captured bodies from memory. Per request: a SHA-256 hash of the presented key and
 * a Map look-up of it (for authenticated operations), a pino line at `info` through sonic-boom's
 * asynchronous 4 KB batches on stdout (the server's destination), a prom-client counter and
 * histogram observation, and res.json of the body. No contract validation, no database: what
 * the server's own work could cost when written for the hot path alone.
 *
 * argv: <captured responses file> <the benchmark's API key>
 */
const captured = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as CapturedResponse[];
const hash = (key: string) => createHash("sha256").update(key).digest("hex");
const keys = new Map([[hash(process.argv[3]!), { brandId: randomUUID(), mode: "test" }]]);

const logger = pino(
  { level: "info", formatters: { level: (label) => ({ level: label }) }, timestamp: pino.stdTimeFunctions.isoTime },
  pino.destination({ dest: 1, sync: false, minLength: 4000 }),
);
const registry = new Registry();
const requests = new Counter({
  name: "http_requests_total",
  help: "HTTP requests answered.",
  labelNames: ["operation", "status"],
  registers: [registry],
});
const duration = new Histogram({
  name: "http_request_duration_seconds",
  help: "Time to the response's last byte.",
  labelNames: ["operation"],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.use(express.json({ limit: "1mb" }));
for (const response of captured) {
  const body = JSON.parse(response.body) as unknown;
  const operation = `${response.method} ${response.route}`;
  const authenticated = response.route !== "/api/v1/creators";
  app[response.method.toLowerCase() as "get" | "post" | "delete"](response.route, (req, res) => {
    const started = performance.now();
    let caller: { brandId: string; mode: string } | undefined;
    if (authenticated) {
      caller = keys.get(hash((req.headers.authorization ?? "").replace(/^Bearer /, "")));
      if (!caller) {
        res.status(401).json({ error: { code: "unauthorized", message: "Unknown key." } });
        return;
      }
    }
    res.on("finish", () => {
      const seconds = (performance.now() - started) / 1000;
      requests.inc({ operation, status: String(res.statusCode) });
      duration.observe({ operation }, seconds);
      logger.info(
        {
          request_id: res.get("request-id"),
          method: req.method,
          operation,
          status: res.statusCode,
          latency_ms: Math.round(seconds * 10_000) / 10,
          brand_id: caller?.brandId,
          mode: caller?.mode,
          client_address: req.socket.remoteAddress,
        },
        "request",
      );
    });
    res.status(response.status).set(response.headers).json(body);
  });
}
app.get("/metrics", async (_req, res) => {
  res.type(registry.contentType).send(await registry.metrics());
});

const server = app.listen(0, "127.0.0.1", () => announce((server.address() as AddressInfo).port));
process.once("SIGTERM", () => server.close(() => process.exit(0)));

import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import express from "express";
import { loadContract } from "../../contract/contract.ts";
import { errorHandler } from "../../server/http/error-handler.ts";
import { contractValidator } from "../../server/http/validator.ts";
import { announce, type CapturedResponse } from "./captured.ts";

/**
 * The framework ceiling: the server's Express 5 stack with the same contract validator (requests
 * and responses), answering the captured bodies from memory with no auth and no database. Bodies
 * go out through res.json, as in the server, so response validation runs on them too.
 */
const captured = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as CapturedResponse[];

const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.use(express.json({ limit: "1mb" }));
app.use(contractValidator(await loadContract()));
for (const response of captured) {
  const body = JSON.parse(response.body) as unknown;
  app[response.method.toLowerCase() as "get" | "post" | "delete"](response.route, (_req, res) => {
    res.status(response.status).set(response.headers).json(body);
  });
}
app.use(errorHandler());

const server = app.listen(0, "127.0.0.1", () => announce((server.address() as AddressInfo).port));
process.once("SIGTERM", () => server.close(() => process.exit(0)));

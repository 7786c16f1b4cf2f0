import { once } from "node:events";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/** Deliberate contract breaks, for proving that the conformance suite catches them. */
export interface ContractFaults {
  /** Adds the undocumented field `fault_injected` to every JSON object the public API answers. */
  extraResponseField?: boolean;
  /** Answers 203, a status no operation documents, instead of every 2xx of the public API. */
  undocumentedStatus?: boolean;
}

export interface FaultProxy {
  /** The proxy's origin, e.g. `http://127.0.0.1:41234`: the server's paths, answered through the faults. */
  readonly url: string;
  close(): Promise<void>;
}

const API_BASE = "/api/v1";

/**
 * A reverse proxy in front of a server (`target`, its origin) that breaks the public API's answers
 * on their way out, after the server validated them against the contract: the server itself stays
 * unchanged, as a faulty deployment would look from outside. JSON answers of /api/v1 are rewritten
 * whole; every other answer (an event stream, the operator API) passes through as it is.
 */
export async function startFaultProxy(target: string, faults: ContractFaults): Promise<FaultProxy> {
  const server = createServer((req, res) => {
    const upstream = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      const isJson = /^application\/json\b/.test(answer.headers["content-type"] ?? "");
      if (!req.url?.startsWith(API_BASE) || !isJson) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () => {
        let status = answer.statusCode ?? 502;
        let body = Buffer.concat(chunks);
        if (faults.undocumentedStatus && status >= 200 && status < 300) status = 203;
        if (faults.extraResponseField && body.length > 0) {
          const parsed = JSON.parse(body.toString("utf8")) as unknown;
          if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
            body = Buffer.from(JSON.stringify({ ...parsed, fault_injected: true }));
        }
        const headers = { ...answer.headers, "content-length": String(body.length) };
        delete headers["transfer-encoding"];
        res.writeHead(status, headers);
        res.end(body);
      });
      answer.on("error", () => res.destroy());
    });
    upstream.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import { request } from "node:http";
import { streamBody } from "./harness.ts";

/** One answer, or the failure to get one (`status` 0, `failure` says how). */
export interface Answer {
  /** Which server process (index into the bases). */
  process: number;
  /** The contract's operationId, or `readyz`. */
  operation: string;
  status: number;
  code?: string;
  message?: string;
  body?: any;
  failure?: string;
  /** The answer's Set-Cookie lines. */
  setCookies?: string[];
  startedAt: number;
  endedAt: number;
}

/**
 * One request on a connection of its own (no keep-alive, so a connection the server closes while
 * idle is never mistaken for a fault); gives up after `timeoutMs` without a byte.
 */
export function send(
  base: string,
  method: string,
  path: string,
  {
    key,
    body,
    timeoutMs,
    headers = {},
  }: { key?: string; body?: unknown; timeoutMs: number; headers?: Record<string, string> },
): Promise<Omit<Answer, "process" | "operation">> {
  const startedAt = Date.now();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(base + path, {
      method,
      agent: false,
      timeout: timeoutMs,
      headers: {
        ...headers,
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(payload === undefined
          ? {}
          : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
      },
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (error: NodeJS.ErrnoException) => {
      resolve({ status: 0, failure: error.code ?? error.message, startedAt, endedAt: Date.now() });
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("error", (error: NodeJS.ErrnoException) =>
        resolve({ status: 0, failure: error.code ?? error.message, startedAt, endedAt: Date.now() }),
      );
      res.on("end", () => {
        let parsed: any;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        const error = parsed?.error as { code?: string; message?: string } | undefined;
        resolve({
          status: res.statusCode ?? 0,
          body: parsed,
          code: error?.code,
          message: error?.message,
          setCookies: res.headers["set-cookie"] ?? [],
          startedAt,
          endedAt: Date.now(),
        });
      });
    });
    req.end(payload);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface MixedLoad {
  answers: Answer[];
  /** Streams answered 201, in order. */
  created: string[];
  /** Streams whose end was answered 200. */
  ended: Set<string>;
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<void>;
}

/**
 * `clients` clients, each in a loop over both processes in turn: start a stream, list streams,
 * read it, end it; every fourth turn also lists webhooks, registers one at `spareHookUrl` (for
 * `stream.error` only, which test streams never fire) and deletes it again.
 */
export function startMixedLoad({
  bases,
  key,
  spareHookUrl,
  clients,
  pauseMs,
  timeoutMs,
}: {
  bases: string[];
  key: string;
  spareHookUrl: string;
  clients: number;
  /** Between two turns of a client. */
  pauseMs: number;
  timeoutMs: number;
}): MixedLoad {
  const answers: Answer[] = [];
  const created: string[] = [];
  const ended = new Set<string>();
  let running = true;

  const client = async (n: number) => {
    let turn = n;
    const call = async (operation: string, method: string, path: string, body?: unknown) => {
      const process = turn++ % bases.length;
      const answer = { process, operation, ...(await send(bases[process]!, method, path, { key, body, timeoutMs })) };
      answers.push(answer);
      return answer;
    };
    for (let round = 0; running; round++) {
      const start = await call("createStream", "POST", "/api/v1/streams", streamBody());
      const id = start.status === 201 ? (start.body.stream_id as string) : null;
      if (id) created.push(id);
      await call("listStreams", "GET", "/api/v1/streams?limit=5");
      if (id) {
        await call("getStream", "GET", `/api/v1/streams/${id}`);
        if ((await call("endStream", "DELETE", `/api/v1/streams/${id}`)).status === 200) ended.add(id);
      }
      if (round % 4 === n % 4) {
        await call("listWebhooks", "GET", "/api/v1/webhooks");
        const hook = await call("createWebhook", "POST", "/api/v1/webhooks", {
          url: spareHookUrl,
          events: ["stream.error"],
        });
        if (hook.status === 201) await call("deleteWebhook", "DELETE", `/api/v1/webhooks?id=${hook.body.webhook_id}`);
      }
      await sleep(pauseMs);
    }
  };

  const done = Promise.all(Array.from({ length: clients }, (_, n) => client(n)));
  return {
    answers,
    created,
    ended,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** GET /readyz of every process every `everyMs`, until stopped. */
export function probeReadiness({
  bases,
  everyMs,
  timeoutMs,
}: {
  bases: string[];
  everyMs: number;
  timeoutMs: number;
}): {
  probes: Answer[];
  stop(): Promise<void>;
} {
  const probes: Answer[] = [];
  let running = true;
  const probe = async (process: number) => {
    while (running) {
      probes.push({ process, operation: "readyz", ...(await send(bases[process]!, "GET", "/readyz", { timeoutMs })) });
      await sleep(everyMs);
    }
  };
  const done = Promise.all(bases.map((_, process) => probe(process)));
  return {
    probes,
    async stop() {
      running = false;
      await done;
    },
  };
}

// A steady mixed load spread over whichever server processes are in rotation, as a load balancer
// spreads it, for tests that replace processes while it runs (server/tests/release-to-release.test.ts).
import { randomUUID } from "node:crypto";
import { send } from "./mixed-load.ts";
import { streamBody } from "./harness.ts";

/** One server process as the balancer knows it. */
export interface Backend {
  name: string;
  base: string;
}

/**
 * The balancer's list of backends: round robin over those in it. A backend is added once it is
 * ready and taken out before it is stopped, so no new request reaches a process that is stopping.
 */
export class Rotation {
  private members: Backend[] = [];
  private turn = 0;
  add(backend: Backend): void {
    this.members.push(backend);
  }
  remove(backend: Backend): void {
    this.members = this.members.filter((member) => member !== backend);
  }
  pick(): Backend | undefined {
    if (this.members.length === 0) return undefined;
    return this.members[this.turn++ % this.members.length];
  }
}

export interface LoadAnswer {
  backend: string;
  operation: string;
  status: number;
  code?: string;
  /** The answer's JSON: the stream's id and status are read from it. */
  body?: { stream_id?: string; status?: string };
  failure?: string;
  startedAt: number;
  endedAt: number;
}

export interface Acked {
  id: string;
  mode: "test" | "live";
  /** When its answer arrived. */
  at: number;
}

export interface RollingLoad {
  /** Every answer, in order (a retried request once, with its final answer). */
  answers: LoadAnswer[];
  /** Connection errors a client retried (`retryConnectionErrors`), each attempt once. */
  retried: LoadAnswer[];
  /** Streams whose start was answered 201. */
  started: Acked[];
  /** Streams whose end was answered 200. */
  ended: Acked[];
  /** Stops sending and waits for each client to finish its turn (every stream it started, ended). */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `clients` clients, each in a loop: start a stream (with an Idempotency-Key), list streams, read
 * the stream until it is live (a live-mode stream is `preparing` until its host joins), end it
 * (with an Idempotency-Key); every request to the next backend in `rotation`. With
 * `retryConnectionErrors` a request that got no answer (refused, reset) is sent again after
 * `retryAfterMs`, as a client retries while its one server restarts: safe for the writes, whose
 * Idempotency-Key makes a second attempt replay the first.
 */
export function startRollingLoad({
  rotation,
  keys,
  clients,
  pauseMs,
  timeoutMs,
  retryConnectionErrors = false,
  retryAfterMs = 50,
}: {
  rotation: Rotation;
  /** The clients take these keys in turn. */
  keys: { key: string; mode: "test" | "live" }[];
  clients: number;
  /** Between two turns of a client. */
  pauseMs: number;
  timeoutMs: number;
  retryConnectionErrors?: boolean;
  retryAfterMs?: number;
}): RollingLoad {
  const answers: LoadAnswer[] = [];
  const retried: LoadAnswer[] = [];
  const started: Acked[] = [];
  const ended: Acked[] = [];
  let running = true;

  const client = async (n: number) => {
    const { key, mode } = keys[n % keys.length]!;
    const call = async (operation: string, method: string, path: string, body?: unknown, idempotencyKey?: string) => {
      for (;;) {
        const backend = rotation.pick();
        const answer: LoadAnswer = backend
          ? {
              backend: backend.name,
              operation,
              ...(await send(backend.base, method, path, {
                key,
                body,
                timeoutMs,
                ...(idempotencyKey ? { headers: { "idempotency-key": idempotencyKey } } : {}),
              })),
            }
          : {
              backend: "none",
              operation,
              status: 0,
              failure: "no backend in rotation",
              startedAt: Date.now(),
              endedAt: Date.now(),
            };
        if (answer.status === 0 && retryConnectionErrors) {
          retried.push(answer);
          await sleep(retryAfterMs);
          continue;
        }
        answers.push(answer);
        return answer;
      }
    };
    while (running) {
      const start = await call("createStream", "POST", "/api/v1/streams", streamBody(), randomUUID());
      const id = start.status === 201 ? start.body?.stream_id : undefined;
      if (id) started.push({ id, mode, at: start.endedAt });
      await call("listStreams", "GET", "/api/v1/streams?limit=5");
      if (id) {
        let status: string | undefined;
        for (let read = 0; read < 100; read++) {
          const answer = await call("getStream", "GET", `/api/v1/streams/${id}`);
          status = answer.status === 200 ? answer.body?.status : undefined;
          if (status !== "preparing") break;
          await sleep(50);
        }
        if (status === "live") {
          const end = await call("endStream", "DELETE", `/api/v1/streams/${id}`, undefined, randomUUID());
          if (end.status === 200) ended.push({ id, mode, at: end.endedAt });
        } else {
          answers.push({
            backend: "-",
            operation: "getStream",
            status: 0,
            failure: `stream ${id} never went live (last read: ${status ?? "no answer"})`,
            startedAt: Date.now(),
            endedAt: Date.now(),
          });
        }
      }
      await sleep(pauseMs);
    }
  };

  const done = Promise.all(Array.from({ length: clients }, (_, n) => client(n)));
  return {
    answers,
    retried,
    started,
    ended,
    async stop() {
      running = false;
      await done;
    },
  };
}

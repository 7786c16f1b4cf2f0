import { parentPort } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { worker } from "@electric-sql/pglite/worker";
import { embeddedOptions } from "../../server/store/embedded-settings.ts";

/**
 * PGlite's own worker side (@electric-sql/pglite/worker) in a node:worker_threads thread. It is
 * written for a browser's Web Worker: it talks through the global postMessage and
 * addEventListener, which a Node worker has on `parentPort` instead, so those two are bridged.
 */
const port = parentPort!;
Object.assign(globalThis, {
  postMessage: (message: unknown) => port.postMessage(message),
  addEventListener: (type: string, listener: (event: { data: unknown }) => void, options?: { once?: boolean }) => {
    if (type !== "message") return;
    const wrapped = (data: unknown) => listener({ data });
    if (options?.once) port.once("message", wrapped);
    else port.on("message", wrapped);
  },
});

worker({ init: () => PGlite.create(embeddedOptions()) });

/**
 * `npm run mock [-- --dynamic]` (see serve.ts). Node's compile cache is switched on first, as in
 * server/main.ts: a restart takes the mock's modules, Prism's included (it runs in this process),
 * compiled from it instead of compiling them again.
 */
import * as module from "node:module";

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import("./serve.ts");

import { setFlagsFromString } from "node:v8";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";

/**
 * PostgreSQL settings of the embedded database, given on its command line (they win over its
 * postgresql.conf, which stays initdb's). Measured on Node 24 (docs/performance.md, Start-up):
 *
 * - `shared_buffers`: initdb writes 128MB, meant for a server with the machine to itself. PGlite
 *   keeps it in its WebAssembly memory and touches all of it at start, so it was 128 MB of the
 *   process's resident memory before the first query. 16MB holds this API's working set (the
 *   catalogue, the indexes and rows of the pages it serves); pages beyond it are read from the
 *   data directory (the operating system's cache) or, with `memory:`, from PGlite's in-memory
 *   files, which hold the whole database anyway.
 * - `wal_buffers` follows (1/32 of shared_buffers: 512kB); `work_mem` (4MB) and `temp_buffers`
 *   are taken only while a query needs them, so they stay as they are.
 *
 * - `wal_init_zero`: off. A new WAL segment was filled with 16 MB of zeros first, which is meant
 *   to have the space allocated before WAL is written and fsynced; PGlite runs with fsync off
 *   (its `-F`), so it bought no durability (a full disk now shows at a later WAL write rather
 *   than when a segment is made). With `memory:` the zeros went through the in-memory file
 *   system, which grows a file by an eighth at a time, copying it whole each time: 230 MB of
 *   buffers allocated, copied and left to the garbage collector per 20,000 request-log entries
 *   of 6.6 KB answers, beside 320 MB for the growth of the table and its indexes
 *   (docs/performance.md, The request log's cost). Off, a segment is made with a single write at
 *   its end: 34 MB.
 *
 * The WebAssembly memory itself cannot start smaller than the 128 MB PGlite's module declares
 * (`initialMemory` below that is refused); the pages it does not touch cost no resident memory.
 */
export const EMBEDDED_SETTINGS: Readonly<Record<string, string>> = { shared_buffers: "16MB", wal_init_zero: "off" };

/**
 * V8 runs WebAssembly with a quick compiler first and recompiles the functions that run often
 * with its optimising one. One of PostgreSQL's functions, the SQL parser (`raw_parser`, one
 * function of 100 kB), takes the optimising compiler 1.8 s of CPU and 600 MB of memory on Node
 * 24, and it runs often enough at start-up to be chosen: the server's memory peaked at 950 MB on
 * a restart and 1.2 GB on a first start, where a container limited to 512 MB is killed. So the
 * embedded database's code stays with the quick compiler: V8's tier-up filter lets only the
 * function of an index no module has be recompiled (V8 reads it as each function is first
 * compiled, so it holds for PGlite's functions, all compiled after this). Opening an existing
 * database then takes 0.35 s of CPU instead of 0.9 s and peaks at 140 MB instead of 680; a write
 * costs the server about 10 % more CPU (bench/cpu.ts). PostgreSQL is unaffected: no WebAssembly runs on that engine.
 */
const NO_WASM_TIER_UP = `--wasm-tier-up-filter=${2 ** 31 - 1}`;

/** PGlite's own start parameters (single-user mode, fsync off, …) and EMBEDDED_SETTINGS after them. */
export function embeddedOptions(): PGliteOptions {
  setFlagsFromString(NO_WASM_TIER_UP);
  const settings = Object.entries(EMBEDDED_SETTINGS).flatMap(([name, value]) => ["-c", `${name}=${value}`]);
  return { startParams: [...PGlite.defaultStartParams, ...settings] };
}

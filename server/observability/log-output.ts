import { writeSync } from "node:fs";

/** Lines are written once this much is buffered: about twenty request lines per write. */
const WRITE_BATCH_BYTES = 4096;
/** How long a line may wait in the buffer before it is written, at the quietest. */
const FLUSH_INTERVAL_MS = 250;
/** What may wait for a reader that stopped reading; past it, lines are dropped and counted. */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;
/** How long the final flush (shutdown, exit) waits for a reader that does not read. */
const FINAL_FLUSH_PATIENCE_MS = 1000;
/** While the reader takes nothing, writes are tried again after 10 ms, doubling up to 250 ms. */
const FIRST_RETRY_MS = 10;

export interface LineOutputOptions {
  fd: number;
  batchBytes?: number;
  flushIntervalMs?: number;
  maxWaitingBytes?: number;
  finalFlushPatienceMs?: number;
}

/**
 * Log lines written to a file descriptor in batches, on the calling thread, never blocking it.
 *
 * Lines gather until 4 KB (or 250 ms) and go out in one `write` system call made right here: a
 * write handed to libuv's thread pool (sonic-boom's asynchronous mode, which this replaces)
 * costs a thread hand-off and a completion callback per batch, a visible part of a request's
 * cost at 10,000 requests a second. Made here, a write must never wait: when stdout is a pipe
 * whose reader has stalled, it answers EAGAIN (Node puts a pipe on stdout into non-blocking mode,
 * see `stdoutLines`), and then the batch waits in memory and is tried again after 10 ms to
 * 250 ms, while the event loop serves requests. (sonic-boom's synchronous mode sleeps 100 ms on
 * the main thread at each EAGAIN and retries recursively: the server freezes.) What waits is
 * bounded at 16 MB: past that, lines are dropped until the reader has taken everything, and then
 * one line says how many were lost. A reader that is gone (EPIPE) or a closed descriptor turns
 * the output into a sink; logging never throws into a request.
 *
 * A file or a terminal never answers EAGAIN (a terminal is blocking, as Node makes it): their
 * writes go out at once, as before.
 */
export class LineOutput {
  private readonly fd: number;
  private readonly batchBytes: number;
  private readonly maxWaitingBytes: number;
  private readonly finalFlushPatienceMs: number;
  /** Lines not yet handed to `write`. */
  private batch = "";
  /** Bytes a `write` did not take (the reader is behind); always written before `batch`. */
  private unwritten: Buffer | null = null;
  /** Lines dropped since the reader stalled with the buffer full; said once it has caught up. */
  private dropped = 0;
  /** The reader is gone or the descriptor broken: lines are discarded. */
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private retryDelayMs = FIRST_RETRY_MS;
  private readonly periodicFlush: NodeJS.Timeout;

  constructor({ fd, batchBytes = WRITE_BATCH_BYTES, flushIntervalMs = FLUSH_INTERVAL_MS, maxWaitingBytes = MAX_WAITING_BYTES, finalFlushPatienceMs = FINAL_FLUSH_PATIENCE_MS }: LineOutputOptions) {
    this.fd = fd;
    this.batchBytes = batchBytes;
    this.maxWaitingBytes = maxWaitingBytes;
    this.finalFlushPatienceMs = finalFlushPatienceMs;
    this.periodicFlush = setInterval(() => this.writeUnlessWaiting(), flushIntervalMs).unref();
  }

  /** pino's destination interface: `line` ends with a newline. */
  write(line: string): void {
    if (this.closed) return;
    if (this.unwritten !== null) return this.holdWhileStalled(line);
    this.batch += line;
    if (this.batch.length >= this.batchBytes) this.writeUnlessWaiting();
  }

  /**
   * Writes everything buffered, then calls `done` (pino's `logger.flush`, at shutdown). A reader
   * that does not read is waited for at most a second: a stopping server must not hang on its log.
   */
  flush(done?: (error?: Error) => void): void {
    this.flushSync();
    done?.();
  }

  /** The final flush, from the process's `exit` event too, where nothing asynchronous runs. */
  flushSync(): void {
    const deadline = Date.now() + this.finalFlushPatienceMs;
    while (!this.writeAll()) {
      if (Date.now() >= deadline) return;
      sleep(5);
    }
  }

  /** While the reader is behind, lines wait in `batch`, up to the bound; then they are dropped until it catches up. */
  private holdWhileStalled(line: string): void {
    if (this.dropped === 0 && this.unwritten!.length + this.batch.length + line.length <= this.maxWaitingBytes) {
      this.batch += line;
    } else {
      this.dropped += 1;
    }
  }

  private writeUnlessWaiting(): void {
    if (this.unwritten !== null || this.closed) return; // the retry timer has it
    if (!this.writeAll()) this.retryLater();
  }

  private retryLater(): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (this.writeAll()) {
        this.retryDelayMs = FIRST_RETRY_MS;
      } else {
        this.retryDelayMs = Math.min(this.retryDelayMs * 2, FLUSH_INTERVAL_MS);
        this.retryLater();
      }
    }, this.retryDelayMs).unref();
  }

  /** Writes until nothing is left (true) or the reader takes no more now (false). */
  private writeAll(): boolean {
    for (;;) {
      if (this.closed) return true;
      if (this.unwritten === null) {
        if (this.batch === "" && this.dropped > 0) {
          this.batch = droppedLinesNotice(this.dropped);
          this.dropped = 0;
        }
        if (this.batch === "") return true;
        this.unwritten = Buffer.from(this.batch);
        this.batch = "";
      }
      let written: number;
      try {
        written = writeSync(this.fd, this.unwritten);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EAGAIN") return false;
        this.discardFromNowOn();
        return true;
      }
      // A pipe with less room than the batch takes part of it: the rest waits for the next try.
      if (written < this.unwritten.length) {
        this.unwritten = this.unwritten.subarray(written);
        return false;
      }
      this.unwritten = null;
    }
  }

  private discardFromNowOn(): void {
    this.closed = true;
    this.batch = "";
    this.unwritten = null;
    clearInterval(this.periodicFlush);
  }
}

/** The line that says, once the reader has caught up, how many lines it never got. */
function droppedLinesNotice(dropped: number): string {
  const line = { level: "warn", time: new Date().toISOString(), pid: process.pid, msg: "log lines dropped: stdout did not take them", dropped };
  return `${JSON.stringify(line)}\n`;
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

let stdout: LineOutput | undefined;

/**
 * The process's stdout as a `LineOutput`, one for every logger of the process, so their lines
 * keep their order, and written out when the process exits however it exits (a SIGKILL aside).
 */
export function stdoutLines(): LineOutput {
  if (stdout) return stdout;
  // Opening Node's stdout stream puts a pipe on fd 1 into non-blocking mode (files and terminals
  // stay blocking, and never make a writer wait for a reader): without it, a write to a pipe whose
  // reader has stalled would block the event loop instead of answering EAGAIN.
  void process.stdout;
  const output = new LineOutput({ fd: 1 });
  process.once("exit", () => output.flushSync());
  stdout = output;
  return output;
}

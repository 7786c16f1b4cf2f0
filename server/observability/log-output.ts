import { writeSync as fsWriteSync } from "node:fs";
import { hostname } from "node:os";

/**
 * Lines are written once this much has gathered: about eighteen request lines per write. It is
 * also Linux's PIPE_BUF: a write of at most 4 KB to a pipe goes in whole or not at all, so a line
 * is never cut by whatever else writes to the same stdout (console.log).
 */
const WRITE_BYTES = 4096;
/** How long a line may wait in the batch before it is written, at the quietest. */
const FLUSH_INTERVAL_MS = 250;
/** What may wait for a reader that is behind (counted in characters); past it, lines are dropped and counted. */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;
/** How long the final flush (shutdown, exit) waits for a reader that takes nothing. */
const FINAL_FLUSH_PATIENCE_MS = 1000;
/** The final flush's limit however slowly the reader takes what is left. */
const FINAL_FLUSH_LIMIT_MS = 10_000;
/** While the reader is behind: the next try after one that wrote something, and the first and longest waits after one that did not. */
const RETRY_AFTER_PROGRESS_MS = 1;
const FIRST_RETRY_MS = 10;
const LONGEST_RETRY_MS = 250;
/** Errors after which nothing will ever be read: stdout is closed. */
const CLOSED = new Set(["EPIPE", "EBADF", "ECONNRESET", "ENOTCONN"]);
const NEWLINE = 0x0a;

export interface LineOutputOptions {
  fd: number;
  maxWaitingBytes?: number;
  /** `fs.writeSync`; tests pass one that fails as a full disk does. */
  writeSync?: (fd: number, bytes: Buffer, offset: number, length: number) => number;
}

/**
 * Log lines written to a file descriptor in batches, on the calling thread, never waiting for a
 * reader.
 *
 * Lines gather up to 4 KB (or 250 ms) and go out in one `write` system call made right here: a
 * write handed to libuv's thread pool (sonic-boom's asynchronous mode, which this replaces)
 * costs a thread hand-off and a completion callback per batch, a visible part of a request's
 * cost at thousands of requests a second. Made here, a write must never wait: when stdout is a
 * pipe whose reader is behind, it answers EAGAIN (Node puts a pipe on stdout into non-blocking
 * mode, see `stdoutLines`), and then lines wait in memory and are tried again, at once while the
 * reader takes data and after 10 ms to 250 ms while it takes none, as the event loop serves
 * requests. (sonic-boom's synchronous mode sleeps 100 ms on the main thread at each EAGAIN and
 * retries recursively: the server freezes.) What waits is bounded at 16 MB: past that, lines are
 * dropped until the reader has taken everything, and then one line says how many were lost. A
 * write that fails otherwise (ENOSPC on a full disk) loses what waits at that moment, counted the
 * same way, and later lines are tried again. A reader that is gone (EPIPE) or a closed descriptor
 * turns the output into a sink, said once on stderr. Logging never throws into a request.
 *
 * Files never answer EAGAIN. A terminal stays blocking, as Node makes it for console.log: a
 * terminal paused with Ctrl-S holds the server as it holds console.log.
 */
export class LineOutput {
  private readonly fd: number;
  private readonly maxWaitingBytes: number;
  private readonly writeSync: NonNullable<LineOutputOptions["writeSync"]>;
  /** Read once: the dropped-lines line is written from a timer, where nothing may throw. */
  private readonly hostname = hostname();
  /** Lines not yet handed to `write`. */
  private batch = "";
  /** Bytes waiting for the reader, in order, all before `batch`; the first may be partly written. */
  private readonly waiting: Buffer[] = [];
  private waitingBytes = 0;
  /** The bound was reached: lines are dropped until everything waiting has been written. */
  private droppingUntilCaughtUp = false;
  /** Lines lost since the output last caught up, and why; said in one line once it has. */
  private dropped = 0;
  private dropReason = "";
  /** The reader is gone or the descriptor broken: lines are discarded. */
  private closed = false;
  /** Every byte written so far: tells a try that made progress from one that did not. */
  private bytesWritten = 0;
  /** The last write did not end a line (a line longer than 4 KB, cut by a failed write). */
  private midLine = false;
  private retry: NodeJS.Timeout | null = null;
  private retryDelayMs = FIRST_RETRY_MS;
  /** A final flush gave up on the reader: the next one (the exit after a shutdown's flush) makes one try and does not wait again. */
  private patienceSpent = false;
  private readonly periodicFlush: NodeJS.Timeout;

  constructor({ fd, maxWaitingBytes = MAX_WAITING_BYTES, writeSync = fsWriteSync }: LineOutputOptions) {
    this.fd = fd;
    this.maxWaitingBytes = maxWaitingBytes;
    this.writeSync = writeSync;
    this.periodicFlush = setInterval(() => this.writeUnlessBehind(), FLUSH_INTERVAL_MS).unref();
  }

  /** pino's destination interface: `line` ends with a newline. */
  write(line: string): void {
    if (this.batch.length + line.length > WRITE_BYTES) this.writeUnlessBehind();
    if (this.closed) return;
    if (this.behind()) return this.holdWhileBehind(line);
    this.batch += line;
  }

  /** Something waits for the reader (bytes, or the line that counts dropped ones): the retry timer is on it. */
  private behind(): boolean {
    return this.waitingBytes > 0 || this.dropped > 0;
  }

  /**
   * Writes everything gathered, then calls `done` (pino's `logger.flush`, at shutdown). A reader
   * that takes nothing is waited for a second at most: a stopping server must not hang on its log.
   */
  flush(done?: (error?: Error) => void): void {
    this.flushSync();
    done?.();
  }

  /**
   * The final flush, also run by the process's `exit` event, where nothing asynchronous runs: it
   * waits while the reader takes data (up to 10 s) and gives up after a second in which it took
   * none. What it leaves is left to the retry timer, should the process go on.
   */
  flushSync(): void {
    // A monotonic clock: a wall clock stepped back must not make the wait endless.
    const started = performance.now();
    let progressAt = started;
    let written = this.bytesWritten;
    while (!this.writeAll()) {
      const now = performance.now();
      if (this.bytesWritten > written) [written, progressAt] = [this.bytesWritten, now];
      if (this.patienceSpent || now - progressAt >= FINAL_FLUSH_PATIENCE_MS || now - started >= FINAL_FLUSH_LIMIT_MS) {
        this.patienceSpent = true;
        return this.retryLater();
      }
      sleep(1);
    }
    this.patienceSpent = false;
  }

  /** Lines still waiting (at exit, after the final flush gave up): said on stderr, as the log cannot say it. */
  reportUnwritten(): void {
    const unwritten = this.linesWaiting() + this.dropped;
    if (unwritten > 0) toStderr(`Exiting with ${unwritten} log line(s) not written to stdout.`);
  }

  /** While the reader is behind, lines wait up to the bound; past it they are dropped until it has caught up. */
  private holdWhileBehind(line: string): void {
    if (!this.droppingUntilCaughtUp && this.waitingBytes + this.batch.length + line.length <= this.maxWaitingBytes) {
      this.batch += line;
      return;
    }
    if (!this.droppingUntilCaughtUp) {
      // What was accepted goes out before the line that counts the dropped ones.
      this.droppingUntilCaughtUp = true;
      if (this.dropped === 0) this.dropReason = "stdout did not take them";
      this.enqueueBatch();
    }
    this.dropped += 1;
  }

  private writeUnlessBehind(): void {
    if (this.behind() || this.closed) return; // the retry timer has it
    if (!this.writeAll()) this.retryLater();
  }

  private retryLater(): void {
    if (this.retry || this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      const before = this.bytesWritten;
      if (this.writeAll()) {
        this.retryDelayMs = FIRST_RETRY_MS;
        this.patienceSpent = false;
        return;
      }
      // A reader that took something is reading: come back at once for the rest. One that took
      // nothing is given more time before each try.
      this.retryDelayMs = this.bytesWritten > before ? RETRY_AFTER_PROGRESS_MS : Math.min(Math.max(this.retryDelayMs * 2, FIRST_RETRY_MS), LONGEST_RETRY_MS);
      this.retryLater();
    }, this.retryDelayMs).unref();
  }

  /** Writes until nothing is left (true) or the reader takes no more for now, or a write failed (false). */
  private writeAll(): boolean {
    for (;;) {
      if (this.closed) return true;
      if (this.waiting.length === 0) {
        this.droppingUntilCaughtUp = false;
        // A notice the disk refuses too waits for the next try; the lines after it are tried
        // meanwhile (and dropped and counted if refused), not held.
        const notice = this.dropped > 0 ? this.writeDroppedLinesNotice() : "written";
        if (notice === "retry") return this.closed;
        if (this.batch === "") return notice === "written";
        this.enqueueBatch();
      }
      const next = this.waiting[0]!;
      const length = nextWriteLength(next);
      const written = this.writeSome(next, length);
      if (written === "retry") return this.closed;
      if (written === "failed") {
        this.dropEverythingWaiting();
        return false;
      }
      this.consume(written);
    }
  }

  /**
   * One `write`: the bytes it took, or "retry" (the reader takes nothing now, or stdout is closed
   * and the output is a sink from now on), or "failed" (an error that may pass, such as ENOSPC).
   */
  private writeSome(bytes: Buffer, length: number): number | "retry" | "failed" {
    try {
      const written = this.writeSync(this.fd, bytes, 0, length);
      if (written <= 0) return "retry";
      this.bytesWritten += written;
      this.midLine = bytes[written - 1] !== NEWLINE;
      return written;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "unknown error";
      if (code === "EAGAIN") return "retry";
      if (CLOSED.has(code)) {
        this.discardFromNowOn(code);
        return "retry";
      }
      if (this.dropped === 0) {
        this.dropReason = `writing stdout failed: ${code}`;
        toStderr(`Log lines could not be written to stdout (${code}); they are dropped and counted until a write succeeds.`);
      }
      return "failed";
    }
  }

  /** The line that says, once the output has caught up, how many lines it lost and why. */
  private writeDroppedLinesNotice(): "written" | "retry" | "failed" {
    const line = { level: "warn", time: new Date().toISOString(), pid: process.pid, hostname: this.hostname, msg: "log lines dropped", dropped: this.dropped, reason: this.dropReason };
    // After a line cut by a failed write, the notice starts a line of its own.
    const notice = Buffer.from(`${this.midLine ? "\n" : ""}${JSON.stringify(line)}\n`);
    const written = this.writeSome(notice, notice.length);
    if (typeof written !== "number") return written;
    this.dropped = 0;
    // A pipe takes a line under 4 KB whole or not at all; a socket may take part of it.
    if (written < notice.length) this.enqueue(notice.subarray(written));
    return "written";
  }

  private enqueueBatch(): void {
    if (this.batch === "") return;
    this.enqueue(Buffer.from(this.batch));
    this.batch = "";
  }

  private enqueue(bytes: Buffer): void {
    this.waiting.push(bytes);
    this.waitingBytes += bytes.length;
  }

  /** Takes `count` written bytes off the front of what waits. */
  private consume(count: number): void {
    const first = this.waiting[0]!;
    this.waitingBytes -= count;
    if (count >= first.length) this.waiting.shift();
    else this.waiting[0] = first.subarray(count);
  }

  /**
   * A write failed (a full disk, an I/O error): what waits is lost and counted, the rest of a
   * line cut by it included, rather than held for a disk that may stay full; what follows is
   * tried again.
   */
  private dropEverythingWaiting(): void {
    this.dropped += Math.max(this.linesWaiting(), 1);
    this.forgetWaiting();
  }

  private discardFromNowOn(code: string): void {
    this.closed = true;
    this.forgetWaiting();
    clearInterval(this.periodicFlush);
    toStderr(`Stdout is closed (${code}): log lines are discarded from now on.`);
  }

  /** The lines in what waits and in the batch (a line cut by a partial write counts as one). */
  private linesWaiting(): number {
    let lines = countLines(this.batch);
    for (const bytes of this.waiting) lines += countLines(bytes);
    return lines;
  }

  private forgetWaiting(): void {
    this.batch = "";
    this.waiting.length = 0;
    this.waitingBytes = 0;
  }
}

/** The length of the next write: at most 4 KB, ending at a line's end unless a single line is longer. */
function nextWriteLength(bytes: Buffer): number {
  if (bytes.length <= WRITE_BYTES) return bytes.length;
  const lastNewline = bytes.lastIndexOf(NEWLINE, WRITE_BYTES - 1);
  return lastNewline >= 0 ? lastNewline + 1 : WRITE_BYTES;
}

function countLines(text: string | Buffer): number {
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines += 1;
  return lines;
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function toStderr(message: string): void {
  try {
    fsWriteSync(2, `${message}\n`);
  } catch {
    // stderr is gone too: there is no one left to tell.
  }
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
  process.once("exit", () => {
    output.flushSync();
    output.reportUnwritten();
  });
  stdout = output;
  return output;
}

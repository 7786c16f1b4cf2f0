/**
 * Preloaded into the real server by the memory check (`node --expose-gc --import ./probe.ts`):
 * answers an IPC message with the process's RSS after a full garbage collection. It lives in the
 * benchmark, not in the product API, and is only there when the parent opened an IPC channel.
 */
const collect = (globalThis as { gc?: () => void }).gc;

if (process.send) {
  process.on("message", (message: unknown) => {
    if (message !== "rss") return;
    collect?.();
    setImmediate(() => {
      collect?.();
      process.send!({ rss: process.memoryUsage().rss, gc: collect !== undefined });
    });
  });
  // The channel must not keep the server alive once it shuts down.
  process.channel?.unref();
}

import { once } from "node:events";
import { connect, createServer, type Socket } from "node:net";

export interface TcpProxy {
  readonly port: number;
  /**
   * A hanging network: connections stay open and new ones are accepted, but no byte is forwarded
   * and no close is passed on until `resume()`. Bytes sent meanwhile wait, as in a kernel's buffers.
   */
  pause(): void;
  resume(): void;
  /** Destroys every connection on both sides, as a reset network would. */
  cutAll(): void;
  /** Connections open now. */
  connections(): number;
  close(): Promise<void>;
}

/** A loopback TCP proxy to 127.0.0.1:`targetPort`, which the test can make hang (see pause). */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket | null }>();
  let paused = false;
  /** What waits for resume(): starting held connections, reading, passing on a close. */
  let held: Array<() => void> = [];
  const whenFlowing = (action: () => void) => (paused ? held.push(action) : action());

  /** Copies `from` to `to`, with back-pressure; stops reading while paused. */
  const forward = (from: Socket, to: Socket) => {
    const write = (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    };
    from.on("data", (chunk: Buffer) => {
      if (!paused) return write(chunk);
      // Read before pause() took effect: kept, with the reading, for resume().
      from.pause();
      held.push(() => {
        write(chunk);
        from.resume();
      });
    });
    to.on("drain", () => whenFlowing(() => from.resume()));
    from.on("end", () => whenFlowing(() => to.end()));
    from.on("close", () => whenFlowing(() => to.destroy()));
    from.on("error", () => undefined);
  };

  const open = (pair: { client: Socket; upstream: Socket | null }) => {
    if (pair.client.destroyed) return pairs.delete(pair);
    const upstream = connect(targetPort, "127.0.0.1");
    pair.upstream = upstream;
    // A refused connection (the database down) closes the client's at once.
    upstream.on("error", () => pair.client.destroy());
    upstream.on("close", () => pairs.delete(pair));
    forward(pair.client, upstream);
    forward(upstream, pair.client);
    pair.client.resume();
  };

  const server = createServer({ pauseOnConnect: true }, (client) => {
    const pair = { client, upstream: null as Socket | null };
    pairs.add(pair);
    client.on("error", () => undefined);
    client.on("close", () => {
      if (!pair.upstream) pairs.delete(pair);
    });
    whenFlowing(() => open(pair));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };

  const cutAll = () => {
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream?.destroy();
    }
    pairs.clear();
  };

  return {
    port,
    pause() {
      paused = true;
      for (const { client, upstream } of pairs) {
        client.pause();
        upstream?.pause();
        held.push(() => {
          client.resume();
          upstream?.resume();
        });
      }
    },
    resume() {
      paused = false;
      const actions = held;
      held = [];
      for (const action of actions) action();
    },
    cutAll,
    connections: () => pairs.size,
    async close() {
      held = [];
      paused = false;
      cutAll();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// Debian's nginx as a real reverse proxy in front of a test server: started by the test as an
// unprivileged process (nobody, when the tests run as root), on free loopback ports, with a
// config generated in a temporary directory; stopped by its pid.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeCertificate } from "./https-receiver.ts";

const NGINX = "/usr/sbin/nginx";
const NOBODY = 65534;

/** Why the proxy tests cannot run here, or null when they can. */
export function nginxSkipReason(): string | null {
  if (!existsSync(NGINX)) return `skipped: ${NGINX} is missing; install Debian's nginx (apt-get install -y nginx)`;
  try {
    execFileSync(NGINX, ["-v"], { stdio: "ignore" });
    return null;
  } catch (error) {
    return `skipped: ${NGINX} does not run (${(error as Error).message})`;
  }
}

export interface ProxyListener {
  /** Plain http, or https with a certificate made for the run (its `ca` is returned). */
  tls: boolean;
  /**
   * What the proxy tells the server about the scheme: `set` replaces any X-Forwarded-Proto the
   * client sent (nginx's usual `$scheme`); `append` adds its own after the client's, as some
   * load balancers do.
   */
  forwardedProto: "set" | "append";
}

export interface NginxOptions {
  /**
   * The local address nginx connects to the server from (`proxy_bind`), so that the server can
   * trust this one address (TRUST_PROXY) and tell nginx from a client that connects directly.
   * Any address of 127.0.0.0/8 works on Linux, where the whole range is on the loopback.
   */
  upstreamFrom?: string;
}

export interface Nginx {
  /** The port of each listener, in the order given; each listens on 127.0.0.1. */
  ports: number[];
  /** The certificate authority that signed the https listeners' certificate. */
  ca: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, "close");
  return port;
}

function config(
  dir: string,
  upstreamPort: number,
  listeners: ProxyListener[],
  ports: number[],
  { upstreamFrom }: NginxOptions,
): string {
  const servers = listeners.map((listener, i) => {
    const proto =
      listener.forwardedProto === "set"
        ? "$scheme"
        : // The client's own header first (if any), then this proxy's word.
          '"$http_x_forwarded_proto, $scheme"';
    return `
  server {
    listen 127.0.0.1:${ports[i]}${listener.tls ? " ssl" : ""};
    ${listener.tls ? `ssl_certificate ${dir}/cert.pem;\n    ssl_certificate_key ${dir}/key.pem;` : ""}
    location / {
      proxy_pass http://127.0.0.1:${upstreamPort};${upstreamFrom ? `\n      proxy_bind ${upstreamFrom};` : ""}
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto ${proto};
    }
  }`;
  });
  return `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${servers.join("\n")}
}
`;
}

/** Polls until every port takes a connection, or the deadline passes. */
async function untilListening(ports: number[], child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (const port of ports) {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${stderr()}`);
      const connected = await new Promise<boolean>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
      });
      if (connected) break;
      if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port} within 15 s: ${stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** nginx in front of 127.0.0.1:`upstreamPort`, one server block per listener. */
export async function startNginx(
  upstreamPort: number,
  listeners: ProxyListener[],
  options: NginxOptions = {},
): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), "lsh-nginx-"));
  const { key, cert } = makeCertificate();
  writeFileSync(join(dir, "key.pem"), key);
  writeFileSync(join(dir, "cert.pem"), cert);
  const ports = await Promise.all(listeners.map(() => freePort()));
  writeFileSync(join(dir, "nginx.conf"), config(dir, upstreamPort, listeners, ports, options));
  const asRoot = process.getuid?.() === 0;
  // Never root: as root, the files are handed to nobody and nginx runs as nobody.
  if (asRoot) for (const file of ["", "key.pem", "cert.pem", "nginx.conf"]) chownSync(join(dir, file), NOBODY, NOBODY);
  const child = spawn(NGINX, ["-e", "stderr", "-p", dir, "-c", join(dir, "nginx.conf")], {
    stdio: ["ignore", "ignore", "pipe"],
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => (errors += chunk.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await untilListening(ports, child, () => errors);
  } catch (error) {
    await stop();
    throw error;
  }
  return { ports, ca: cert, stop };
}

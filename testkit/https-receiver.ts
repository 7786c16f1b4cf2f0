import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export type Behaviour = "ok" | "fail" | "redirect" | "hang";

/** A self-signed certificate for localhost and 127.0.0.1, made with openssl for this test run. */
export function makeCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "lsh-cert-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A local HTTPS webhook receiver that records every request and answers as told. */
export async function startReceiver(certificate = makeCertificate()) {
  const received: Received[] = [];
  let behaviour: Behaviour = "ok";
  const hanging: Array<() => void> = [];
  const server = https.createServer(certificate, (request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      if (request.url === "/redirect-target") return void response.writeHead(200).end("ok");
      switch (behaviour) {
        case "ok":
          return void response.writeHead(204).end();
        case "fail":
          return void response.writeHead(500).end("boom");
        case "redirect":
          return void response.writeHead(302, { location: `https://localhost:${port}/redirect-target` }).end();
        case "hang":
          hanging.push(() => response.destroy());
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    cert: certificate.cert,
    url: (path = "/hook") => `https://localhost:${port}${path}`,
    received,
    hooks: () => received.filter((request) => request.path !== "/redirect-target"),
    behave(next: Behaviour) {
      behaviour = next;
    },
    async close() {
      for (const end of hanging) end();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * `npm run check:postman`: converts the public contract (build/docs/openapi.yaml) to a Postman
 * collection with openapi-to-postmanv2's default options, runs the collection with newman against
 * a sandbox server, and reports each request's status.
 *
 * Fails unless every request that needs no id from an earlier response answers 2xx. The requests
 * with a path id (`/streams/:id`) are then run again with the one documented step (the `id` path
 * variable pointed at `{{id}}`, given with `--env-var id=…`) and must answer 2xx as well.
 *
 * The collection is made by the converter's CLI, `openapi2postmanv2 -s build/docs/openapi.yaml -o …`
 * with no options (its `convertV2`).
 *
 * Downloads the converter and newman from the npm registry into a scratch folder, so it is not
 * part of `npm test`. KEEP_CHECK_DIR=1 keeps the folder (the collection included). See
 * docs/generators.md.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { DOCS_SPEC, ROOT } from "./docs-paths.ts";
import { build, installPinned, provisionTenant, scratchDir, startSandbox } from "./check-support.ts";

/** Exact pins: the current releases (both run on Node 20). */
const TOOLS = { "openapi-to-postmanv2": "6.3.3", newman: "6.2.2" } as const;

type Json = Record<string, any>;

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

interface Executed {
  name: string;
  method: string;
  url: string;
  status: number | null;
  pathVariables: string[];
  body: string;
  /** The request's headers as sent (for an event stream, sent again: see streamStatus). */
  headers: Record<string, string>;
}

function requests(items: Json[]): Json[] {
  return items.flatMap((item) => (item.item ? requests(item.item) : [item]));
}

/**
 * The documented step for the requests with a path id (docs/generators.md), run as written there:
 * the `id` path variable, "<string>" after conversion, becomes `{{id}}`, set with `--env-var id=…`.
 */
const POINT_ID_AT_VARIABLE =
  'const fs=require("fs"),f=process.argv[1],c=JSON.parse(fs.readFileSync(f,"utf8")),w=(i)=>i.forEach((x)=>x.item?w(x.item):(x.request.url.variable||[]).forEach((v)=>{if(v.key==="id")v.value="{{id}}"}));w(c.item);fs.writeFileSync(f,JSON.stringify(c,null,2))';

function newmanRun(newman: Json, collection: Json, envVar: { key: string; value: string }[]): Promise<Executed[]> {
  return new Promise((resolve, reject) => {
    newman.run({ collection, envVar, reporters: [], timeoutRequest: 10_000 }, (error: unknown, summary: Json) => {
      if (error) return reject(error);
      resolve(
        summary.run.executions.map((execution: Json) => ({
          name: execution.item.name,
          method: execution.request.method,
          url: execution.request.url.toString(),
          status: execution.response?.code ?? null,
          pathVariables: (execution.item.request.url.variables?.all?.() ?? []).map((variable: Json) => variable.key),
          body: execution.response ? execution.response.stream.toString("utf8") : String(execution.requestError ?? ""),
          headers: execution.request.headers?.toObject?.() ?? {},
        })),
      );
    });
  });
}

/**
 * GET /webhooks/listen answers a stream that never ends, so newman, which waits for the whole
 * body, stops at its request time-out with no status (Postman's app shows the events as they
 * come). Such a request is sent again as the collection has it, and its status is the answer's.
 */
async function streamStatus(executed: Executed, token: string): Promise<Executed> {
  const accept = Object.entries(executed.headers).find(([name]) => name.toLowerCase() === "accept")?.[1];
  if (executed.status !== null || accept !== "text/event-stream") return executed;
  const response = await fetch(executed.url, {
    headers: { ...executed.headers, authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(10_000),
  });
  const first = await response.body?.getReader().read();
  await response.body?.cancel().catch(() => undefined);
  return { ...executed, status: response.status, body: new TextDecoder().decode(first?.value ?? new Uint8Array()) };
}

const ok = (status: number | null) => status !== null && status >= 200 && status < 300;
function line({ name, method, url, status, pathVariables }: Executed): string {
  const verdict = ok(status) ? "2xx " : pathVariables.length ? "(id)" : "FAIL";
  return `${verdict} ${String(status ?? "-").padEnd(4)} ${`${method} ${url}`.padEnd(104)} ${name}`;
}

const scratch = scratchDir("check-postman");
let failed = false;
try {
  build();
  installPinned(scratch.path, TOOLS);
  const newman = createRequire(join(scratch.path, "package.json"))("newman") as Json;
  const collectionFile = join(scratch.path, "collection.json");
  run(
    join(scratch.path, "node_modules", ".bin", "openapi2postmanv2"),
    ["-s", DOCS_SPEC, "-o", collectionFile],
    scratch.path,
  );
  const collection = JSON.parse(readFileSync(collectionFile, "utf8")) as Json;
  const baseUrlName = collection.variable?.find((variable: Json) => String(variable.value).startsWith("http"))?.key;
  const tokenName = /^\{\{(.+)\}\}$/.exec(
    collection.auth?.bearer?.find((entry: Json) => entry.key === "token")?.value ?? "",
  )?.[1];
  if (!baseUrlName || !tokenName)
    throw new Error(
      `the collection names no base URL or bearer token variable: ${JSON.stringify({ variable: collection.variable, auth: collection.auth })}`,
    );
  const pathVariables = [
    ...new Set(
      requests(collection.item).flatMap((item) =>
        (item.request.url.variable ?? []).map((variable: Json) => `${variable.key}=${variable.value}`),
      ),
    ),
  ];
  console.log(
    `collection: ${requests(collection.item).length} requests; variables: ${baseUrlName} (base URL), ${tokenName} (bearer token); path variables: ${pathVariables.join(", ") || "none"}`,
  );

  const sandbox = await startSandbox();
  try {
    const { key } = await provisionTenant(sandbox, "Postman check");
    const envVar = [
      { key: baseUrlName, value: sandbox.apiBase },
      { key: tokenName, value: key },
    ];
    console.log(
      `\nnewman run collection.json --env-var ${baseUrlName}=${sandbox.apiBase} --env-var ${tokenName}=svc_test_…`,
    );
    const first = await Promise.all((await newmanRun(newman, collection, envVar)).map((one) => streamStatus(one, key)));
    for (const executed of first) console.log(line(executed));

    const standalone = first.filter((executed) => executed.pathVariables.length === 0);
    const needsId = first.filter((executed) => executed.pathVariables.length > 0);
    const standaloneOk = standalone.filter((executed) => ok(executed.status)).length;
    console.log(
      `\n${standaloneOk} of ${standalone.length} requests that need no earlier id answered 2xx; ${needsId.length} need a stream id (${needsId.map((executed) => executed.status).join(", ")} with the placeholder)`,
    );
    for (const executed of standalone.filter((executed) => !ok(executed.status))) {
      failed = true;
      console.log(`- ${executed.method} ${executed.url}: ${executed.status} ${executed.body.slice(0, 200)}`);
    }

    const created = first.find(
      (executed) => executed.method === "POST" && /\/streams$/.test(executed.url) && executed.status === 201,
    );
    if (!created)
      throw new Error("Start a stream did not answer 201, so there is no stream id for the requests that need one");
    const streamId = (JSON.parse(created.body) as Json).stream_id as string;
    console.log(
      `\nThe requests with a path id, once it is pointed at {{id}} (docs/generators.md), with --env-var id=${streamId} (the stream started above):`,
    );
    run(process.execPath, ["-e", POINT_ID_AT_VARIABLE, collectionFile], scratch.path);
    const second = await Promise.all(
      (
        await newmanRun(newman, JSON.parse(readFileSync(collectionFile, "utf8")), [
          ...envVar,
          { key: "id", value: streamId },
        ])
      ).map((one) => streamStatus(one, key)),
    );
    for (const executed of second.filter((executed) => executed.pathVariables.length > 0)) {
      console.log(line(executed));
      if (!ok(executed.status)) {
        failed = true;
        console.log(`- ${executed.method} ${executed.url}: ${executed.status} ${executed.body.slice(0, 200)}`);
      }
    }
    const all = second.filter((executed) => ok(executed.status)).length;
    console.log(`with the variable: ${all} of ${second.length} requests answered 2xx`);
  } finally {
    await sandbox.stop();
  }
} finally {
  scratch.remove();
}
process.exitCode = failed ? 1 : 0;

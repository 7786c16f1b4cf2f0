/**
 * `npm run check:postman`: converts the public contract (build/docs/openapi.yaml) to a Postman
 * collection with openapi-to-postmanv2's default options, runs the collection with newman against
 * a sandbox server, and reports each request's status.
 *
 * Fails unless every request that needs no id from an earlier response answers 2xx. The requests
 * with a path id (`/streams/:id`) are then run again with the one documented step (the `id` path
 * variable pointed at `{{id}}`, given with `--env-var id=…`) and must answer 2xx as well.
 *
 * docs/generators.md's `check=postman` blocks are the source: the versions their install command
 * pins, the converter's command (run as written, on the sandbox's /docs/openapi.yaml saved as the
 * page's `openapi.yaml`: the CLI with no options, its `convertV2`), the `--timeout-request` of its
 * newman commands, and the one-line step for the path id (run as written).
 *
 * Downloads the converter and newman from the npm registry into a scratch folder, so it is not
 * part of `npm test`. KEEP_CHECK_DIR=1 keeps the folder (the collection included).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { build, installPinned, provisionTenant, scratchDir, startSandbox } from "./check-support.ts";
import { commands, pageBlocks, partnerEnv, pins } from "./generators-page.ts";

const blocks = pageBlocks("postman");
/** The versions the page's install command pins. */
const TOOLS = pins(blocks);
const pageCommands = blocks.flatMap(commands);
function pageCommand(pattern: RegExp, what: string): string[] {
  const found = pageCommands.filter((command) => pattern.test(command));
  if (!found.length) throw new Error(`docs/generators.md has no ${what} in its check=postman blocks`);
  return found;
}
/** The converter's command as written: `npx openapi2postmanv2 -s openapi.yaml -o <collection>`. */
const [CONVERT] = pageCommand(/^npx openapi2postmanv2 /, "converter command");
const COLLECTION = /\s-o\s+(\S+)/.exec(CONVERT!)?.[1];
/** The documented step for the requests with a path id, as written: the `id` path variable becomes `{{id}}`. */
const [POINT_ID_AT_VARIABLE] = pageCommand(/^node -e /, "one-line step for the path id");
/** newman's request time-out, as the page's newman commands give it (one value for all). */
const timeouts = new Set(
  pageCommand(/^npx newman run /, "newman command").map((command) => /--timeout-request (\d+)/.exec(command)?.[1]),
);
if (!COLLECTION || timeouts.size !== 1 || timeouts.has(undefined))
  throw new Error(`docs/generators.md: the converter needs -o and every newman command one --timeout-request`);
const TIMEOUT_REQUEST = Number([...timeouts][0]);

type Json = Record<string, any>;

/** A command of the page, as written, in the scratch folder; npx may run only what was installed there. */
const shell = (command: string) =>
  execFileSync("bash", ["-euo", "pipefail", "-c", command], {
    cwd: scratch.path,
    env: partnerEnv({ npm_config_yes: "false" }),
    stdio: ["ignore", "inherit", "inherit"],
  });

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

function newmanRun(newman: Json, collection: Json, envVar: { key: string; value: string }[]): Promise<Executed[]> {
  return new Promise((resolve, reject) => {
    newman.run(
      { collection, envVar, reporters: [], timeoutRequest: TIMEOUT_REQUEST },
      (error: unknown, summary: Json) => {
        if (error) return reject(error);
        resolve(
          summary.run.executions.map((execution: Json) => ({
            name: execution.item.name,
            method: execution.request.method,
            url: execution.request.url.toString(),
            status: execution.response?.code ?? null,
            pathVariables: (execution.item.request.url.variables?.all?.() ?? []).map((variable: Json) => variable.key),
            body: execution.response
              ? execution.response.stream.toString("utf8")
              : String(execution.requestError ?? ""),
            headers: execution.request.headers?.toObject?.() ?? {},
          })),
        );
      },
    );
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

/**
 * Requests whose body names a resource of an earlier response (`POST /webhooks/recover` names a
 * webhook): like those with a path id, a collection without scripts cannot fill them in, so they
 * are reported, not required.
 */
const BODY_NAMES_EARLIER_ID = [/\/webhooks\/recover$/];
const needsEarlierId = ({ pathVariables, url }: Executed) =>
  pathVariables.length > 0 || BODY_NAMES_EARLIER_ID.some((pattern) => pattern.test(url));
/** The one documented step points `id` (a stream id) at a variable; other path ids are not covered by it. */
const streamIdOnly = ({ pathVariables }: Executed) => pathVariables.length === 1 && pathVariables[0] === "id";
function line(executed: Executed): string {
  const { name, method, url, status } = executed;
  const verdict = ok(status) ? "2xx " : needsEarlierId(executed) ? "(id)" : "FAIL";
  return `${verdict} ${String(status ?? "-").padEnd(4)} ${`${method} ${url}`.padEnd(104)} ${name}`;
}

const scratch = scratchDir("check-postman");
let failed = false;
try {
  build();
  installPinned(scratch.path, TOOLS);
  const newman = createRequire(join(scratch.path, "package.json"))("newman") as Json;
  const sandbox = await startSandbox();
  try {
    // The page's openapi.yaml: the document the server serves, naming itself.
    const served = await fetch(`${sandbox.origin}/docs/openapi.yaml`);
    if (!served.ok) throw new Error(`GET /docs/openapi.yaml answered ${served.status}`);
    writeFileSync(join(scratch.path, "openapi.yaml"), await served.text());
    console.log(`$ ${CONVERT}`);
    shell(CONVERT!);
    const collectionFile = join(scratch.path, COLLECTION!);
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

    const { key } = await provisionTenant(sandbox, "Postman check");
    const envVar = [
      { key: baseUrlName, value: sandbox.apiBase },
      { key: tokenName, value: key },
    ];
    console.log(
      `\nnewman run ${COLLECTION} --timeout-request ${TIMEOUT_REQUEST} --env-var ${baseUrlName}=${sandbox.apiBase} --env-var ${tokenName}=svc_test_…`,
    );
    const first = await Promise.all((await newmanRun(newman, collection, envVar)).map((one) => streamStatus(one, key)));
    for (const executed of first) console.log(line(executed));

    const standalone = first.filter((executed) => !needsEarlierId(executed));
    const needsId = first.filter(needsEarlierId);
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
    console.log(`$ ${POINT_ID_AT_VARIABLE}`);
    shell(POINT_ID_AT_VARIABLE!);
    const second = await Promise.all(
      (
        await newmanRun(newman, JSON.parse(readFileSync(collectionFile, "utf8")), [
          ...envVar,
          { key: "id", value: streamId },
        ])
      ).map((one) => streamStatus(one, key)),
    );
    for (const executed of second.filter(streamIdOnly)) {
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

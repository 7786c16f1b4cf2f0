/**
 * `npm run conformance -- --target mock|server|both|<url>`: runs the suite, prints the table (and
 * with `both` the parity report), exits 1 on any failure, 2 on a usage error.
 */
import { parseArgs } from "node:util";
import type { ContractFaults } from "../testkit/contract-faults.ts";
import { loadSuiteContract } from "./contract.ts";
import { parityDifferences, parityPairs, runProbes } from "./parity.ts";
import { propertyOptionsFromEnv } from "./properties.ts";
import { failureReport, parityReport, propertyTable, scenarioTable, skipReport } from "./report.ts";
import { SCENARIOS } from "./scenarios/index.ts";
import { runSuite, suiteFailed, type SuiteRun } from "./suite.ts";
import { startMockTarget, startServerTarget, type Target, urlTarget } from "./target.ts";

const USAGE = `Usage: npm run conformance -- --target mock|server|both|<url> [options]

  --target mock     start the Prism mock and run the contract scenarios on it
  --target server   start the server in-process (in-memory PGlite) and run everything
  --target both     both of the above, plus the parity report
  --target <url>    a running deployment's API base, e.g. http://localhost:8080/api/v1
                    (env: ADMIN_TOKEN [+ ADMIN_URL] to provision brands, or CONFORMANCE_API_KEY)
  --stateless       with a URL: contract scenarios only (e.g. a Prism started elsewhere)
  --runs N          property cases per operation and input kind (default 200, env CONFORMANCE_RUNS)
  --seed S          property seed (default random, env CONFORMANCE_SEED); printed for replay
  --no-properties   skip the property-based tests
  --only TEXT       only the scenarios whose name contains TEXT
  --fault NAME      break the in-process server on purpose: extra-response-field, undocumented-status`;

const FAULTS: Record<string, ContractFaults> = {
  "extra-response-field": { extraResponseField: true },
  "undocumented-status": { undocumentedStatus: true },
};

class UsageError extends Error {}

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      target: { type: "string" },
      stateless: { type: "boolean", default: false },
      runs: { type: "string" },
      seed: { type: "string" },
      "no-properties": { type: "boolean", default: false },
      only: { type: "string" },
      fault: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) throw new UsageError("");
  const target = values.target;
  if (!target || !(["mock", "server", "both"].includes(target) || /^https?:\/\//.test(target)))
    throw new UsageError("--target must be mock, server, both or an http(s) URL");
  const fromEnv = (() => {
    try {
      return propertyOptionsFromEnv();
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  })();
  const runs = values.runs === undefined ? fromEnv.runs : Number(values.runs);
  const seed = values.seed === undefined ? fromEnv.seed : Number(values.seed);
  if (!Number.isInteger(runs) || runs < 1) throw new UsageError("--runs must be a whole number of at least 1");
  if (!Number.isInteger(seed)) throw new UsageError("--seed must be a whole number");
  const fault = values.fault === undefined ? undefined : FAULTS[values.fault];
  if (values.fault !== undefined && !fault)
    throw new UsageError(`--fault must be one of ${Object.keys(FAULTS).join(", ")}`);
  return {
    target,
    stateless: values.stateless,
    runs,
    seed,
    properties: !values["no-properties"],
    only: values.only,
    fault,
  };
}

async function main(argv: string[]): Promise<number> {
  const opts = options(argv);
  const contract = await loadSuiteContract();
  const scenarios = opts.only ? SCENARIOS.filter((scenario) => scenario.name.includes(opts.only!)) : SCENARIOS;
  if (scenarios.length === 0) throw new UsageError(`no scenario name contains "${opts.only}"`);
  const targets: Target[] = [];
  const stopAll = () => Promise.allSettled(targets.map((target) => target.stop()));
  const interrupted = () => void stopAll().then(() => process.exit(130));
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    // Started together; each is pushed as soon as it is up, so a failure to start stops the others.
    const starting: Array<Promise<Target>> = [];
    if (opts.target === "mock" || opts.target === "both") starting.push(startMockTarget());
    if (opts.target === "server" || opts.target === "both")
      starting.push(startServerTarget(contract, opts.fault ? { faults: opts.fault } : {}));
    if (/^https?:\/\//.test(opts.target))
      starting.push(urlTarget(contract, opts.target, process.env, { stateless: opts.stateless }));
    const started = await Promise.allSettled(
      starting.map((promise) => promise.then((target) => (targets.push(target), target))),
    );
    const failure = started.find((outcome) => outcome.status === "rejected");
    if (failure) throw failure.reason;
    targets.sort((a, b) => a.kind.localeCompare(b.kind));

    const runs: SuiteRun[] = [];
    for (const target of targets) {
      console.log(
        `Running ${scenarios.length} scenarios against ${target.name}${target.name === target.apiBase ? "" : ` (${target.apiBase})`}…`,
      );
      const properties = opts.properties ? { runs: opts.runs, seed: opts.seed } : null;
      runs.push(await runSuite(target, contract, { scenarios, properties }));
    }
    console.log(`\n${scenarioTable(runs)}\n`);
    const propertyRuns = runs.flatMap((run) => run.properties);
    if (propertyRuns.length > 0) console.log(`${propertyTable(propertyRuns, opts.seed)}\n`);

    let failed = runs.some(suiteFailed);
    const [mock, server] = [
      runs.find((run) => run.target.kind === "mock"),
      runs.find((run) => run.target.kind === "server"),
    ];
    if (mock && server) {
      const probes = { mock: await runProbes(mock.target, contract), server: await runProbes(server.target, contract) };
      const pairs = parityPairs(mock.results, server.results, probes);
      console.log(`${parityReport(parityDifferences(pairs), pairs.length)}\n`);
      const serverBreaks = probes.server.filter((exchange) => exchange.violations.length > 0);
      for (const exchange of serverBreaks)
        console.log(
          `FAIL [server] probe ${exchange.request.method} ${exchange.request.path}: ${exchange.violations.join("; ")}`,
        );
      failed ||= serverBreaks.length > 0;
    }
    const skips = skipReport(runs);
    if (skips) console.log(`${skips}\n`);
    const failures = failureReport(runs);
    if (failures) console.log(`${failures}\n`);
    const counts = runs.map((run) => {
      const count = (outcome: string) => run.results.filter((result) => result.outcome === outcome).length;
      return `${run.target.name}: ${count("pass")} passed, ${count("fail")} failed, ${count("skip")} skipped`;
    });
    console.log(`${failed ? "Conformance FAILED" : "Conformance passed"} — ${counts.join("; ")}`);
    return failed ? 1 : 0;
  } finally {
    await stopAll();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof UsageError) {
      if (error.message) console.error(`${error.message}\n`);
      console.error(USAGE);
      process.exit(2);
    }
    console.error(error);
    process.exit(1);
  },
);

import { terminalSafe } from "../../sdk/terminal-text.ts";
import { parseArgs } from "node:util";
import type { components } from "../../generated/api.ts";
import { loadCliConfig } from "../config.ts";
import { type AdminClient, adminClient } from "./admin-client.ts";
import { BACKUP_COMMANDS, runBackupCommand } from "./backup-cli.ts";

type Schemas = components["schemas"];
type Values = Record<string, string | boolean | undefined>;
/** What a call through openapi-fetch gives back: never throws for an HTTP failure. */
type Answer = { data?: unknown; error?: unknown; response: Response };

const BRAND_LIMIT_FLAGS = {
  "credits-cents": "wallet balance in cents",
  "plan-minutes": "streaming minutes per billing period",
  "rate-limit-per-minute": "requests per minute (default 100)",
  "max-active-streams": "concurrent active streams per mode (default 3)",
} as const;

interface Command {
  /** e.g. `keys revoke <key_id | svc_… key>` */
  usage: string;
  summary: string;
  /** Flags taking a value, with their help; `required` ones must be given. */
  flags?: Record<string, string>;
  /** Flags without a value (true when given), with their help. */
  switches?: Record<string, string>;
  required?: string[];
  /** Name of the one positional argument, when the command takes one. */
  argument?: string;
  run(client: AdminClient, values: Values, argument: string): Promise<Answer>;
}

/** Whole numbers only: `--credits-cents 12.5` is refused here rather than rounded. */
function brandNumbers(values: Values): Record<string, number> {
  const out: Record<string, number> = {};
  for (const flag of Object.keys(BRAND_LIMIT_FLAGS)) {
    const raw = values[flag];
    if (raw === undefined) continue;
    if (typeof raw !== "string" || !/^\d+$/.test(raw))
      throw new UsageError(`--${flag} must be a whole number, got "${raw}"`);
    out[flag.replace(/-/g, "_")] = Number(raw);
  }
  return out;
}

const text = (values: Values, flag: string) => values[flag] as string;

/** The commands, by their first two words. Bodies are the flags as given: the server validates them and its 400 says what is wrong. */
export const COMMANDS: Record<string, Command> = {
  "brands list": {
    usage: "brands list",
    summary: "List every brand with its balances and limits.",
    run: (client) => client.GET("/brands"),
  },
  "brands create": {
    usage: "brands create --name <name> --vertical <live-commerce|igaming> --plan <free|starter|growth|enterprise>",
    summary: "Create a brand.",
    flags: {
      name: "brand name",
      vertical: "live-commerce or igaming",
      plan: "free, starter, growth or enterprise",
      ...BRAND_LIMIT_FLAGS,
    },
    required: ["name", "vertical", "plan"],
    run: (client, values) =>
      client.POST("/brands", {
        body: {
          name: text(values, "name"),
          vertical: text(values, "vertical"),
          plan: text(values, "plan"),
          ...brandNumbers(values),
        } as Schemas["BrandCreate"],
      }),
  },
  "brands get": {
    usage: "brands get <brand_id>",
    summary: "Show a brand.",
    argument: "brand_id",
    run: (client, _values, brandId) => client.GET("/brands/{brand_id}", { params: { path: { brand_id: brandId } } }),
  },
  "brands update": {
    usage:
      "brands update <brand_id> [--plan <plan>] [--credits-cents N] [--plan-minutes N] [--rate-limit-per-minute N] [--max-active-streams N]",
    summary: "Change a brand's plan, credits, minutes or limits; omitted ones stay.",
    flags: { plan: "free, starter, growth or enterprise", ...BRAND_LIMIT_FLAGS },
    argument: "brand_id",
    run: (client, values, brandId) =>
      client.PATCH("/brands/{brand_id}", {
        params: { path: { brand_id: brandId } },
        body: {
          ...(values.plan ? { plan: text(values, "plan") } : {}),
          ...brandNumbers(values),
        } as Schemas["BrandUpdate"],
      }),
  },
  "keys list": {
    usage: "keys list --brand <brand_id>",
    summary: "List a brand's API keys (never the keys themselves).",
    flags: { brand: "the brand id" },
    required: ["brand"],
    run: (client, values) => client.GET("/keys", { params: { query: { brand_id: text(values, "brand") } } }),
  },
  "keys create": {
    usage:
      "keys create --brand <brand_id> --name <name> --environment <test|live> --scopes <scope,scope…> [--expires-at <ISO time>]",
    summary: "Create an API key; the key is printed once.",
    flags: {
      brand: "the brand id",
      name: "a name for the key",
      environment: "test or live (live needs the growth plan or above)",
      scopes: "comma list of streams:read, streams:write, analytics:read, webhooks:write, logs:read",
      "expires-at": "when the key stops working, e.g. 2027-01-01T00:00:00.000Z",
    },
    required: ["brand", "name", "environment", "scopes"],
    run: (client, values) =>
      client.POST("/keys", {
        body: {
          brand_id: text(values, "brand"),
          name: text(values, "name"),
          environment: text(values, "environment"),
          scopes: text(values, "scopes")
            .split(",")
            .map((scope) => scope.trim()),
          ...(values["expires-at"] ? { expires_at: text(values, "expires-at") } : {}),
        } as Schemas["KeyCreate"],
      }),
  },
  "keys revoke": {
    usage: "keys revoke <key_id | svc_… key>",
    summary: "Revoke a key by its id, or by the key itself (a leaked key: sent in the body, looked up by its hash).",
    argument: "key_id | key",
    run: (client, _values, key) =>
      key.startsWith("svc_")
        ? client.POST("/keys/revoke", { body: { key } })
        : client.DELETE("/keys/{key_id}", { params: { path: { key_id: key } } }),
  },
  "members invite": {
    usage: "members invite --brand <brand_id> --email <email> [--role owner|developer|viewer]",
    summary: "Invite a member to a brand's dashboard (default role owner); prints a one-time link, valid 72 hours.",
    flags: { brand: "the brand id", email: "the member's email", role: "owner, developer or viewer (default owner)" },
    required: ["brand", "email"],
    run: (client, values) =>
      client.POST("/invitations", {
        body: {
          brand_id: text(values, "brand"),
          email: text(values, "email"),
          ...(values.role ? { role: text(values, "role") } : {}),
        } as Schemas["AdminInvitationCreate"],
      }),
  },
  "members reset-password": {
    usage: "members reset-password --email <email> [--brand <brand_id>] [--turn-off-two-factor]",
    summary:
      "Issue a one-time password-reset link for a member, valid 1 hour; following it ends the member's sessions.",
    flags: { email: "the member's email", brand: "the member's brand (when the email belongs to several)" },
    switches: {
      "turn-off-two-factor": "the reset also turns two-factor off (a member who lost the second factor too)",
    },
    required: ["email"],
    run: (client, values) =>
      client.POST("/password-resets", {
        body: {
          email: text(values, "email"),
          ...(values.brand ? { brand_id: text(values, "brand") } : {}),
          turn_off_two_factor: values["turn-off-two-factor"] === true,
        },
      }),
  },
  "members unlock": {
    usage: "members unlock --email <email> [--brand <brand_id>]",
    summary: "Clear a member's sign-in throttle, from every address.",
    flags: { email: "the member's email", brand: "the member's brand (when the email belongs to several)" },
    required: ["email"],
    run: (client, values) =>
      client.POST("/sign-in-throttles/clear", {
        body: { email: text(values, "email"), ...(values.brand ? { brand_id: text(values, "brand") } : {}) },
      }),
  },
  "deliveries list": {
    usage: "deliveries list --brand <brand_id> [--webhook <webhook_id>] [--status <pending|succeeded|failed>]",
    summary: "List a brand's webhook deliveries, newest first, with their retry state.",
    flags: { brand: "the brand id", webhook: "only this webhook's deliveries", status: "pending, succeeded or failed" },
    required: ["brand"],
    run: (client, values) =>
      client.GET("/webhook-deliveries", {
        params: {
          query: {
            brand_id: text(values, "brand"),
            ...(values.webhook ? { webhook_id: text(values, "webhook") } : {}),
            ...(values.status ? { status: text(values, "status") as Schemas["DeliveryStatus"] } : {}),
          },
        },
      }),
  },
  "deliveries retry": {
    usage: "deliveries retry <delivery_id>",
    summary: "Make a failed delivery due again (after the partner fixed their receiver).",
    argument: "delivery_id",
    run: (client, _values, deliveryId) =>
      client.POST("/webhook-deliveries/{delivery_id}/retry", { params: { path: { delivery_id: deliveryId } } }),
  },
};

const ENVIRONMENT_HELP = `Environment:
  ADMIN_TOKEN  the server's operator token (required, except for --help)
  ADMIN_URL    the operator API, e.g. https://api.example.com/admin/v1
               (default: http://localhost:$PORT/admin/v1, PORT default 8080)`;

export function topHelp(): string {
  const short = (command: { usage: string }) => command.usage.split(/ (?:--|\[)/)[0]!;
  const width = Math.max(
    ...[...Object.values(COMMANDS), ...Object.values(BACKUP_COMMANDS)].map((c) => short(c).length),
  );
  const lines = [...Object.values(COMMANDS), ...Object.values(BACKUP_COMMANDS)].map(
    (command) => `  ${short(command).padEnd(width)}  ${command.summary}`,
  );
  return `Operator CLI of the Live Stream Hosting API: a client of the operator API (/admin/v1).

Usage: npm run admin -- <command> [options]     (npm run admin -- <command> --help for its options)

Commands:
${lines.join("\n")}

${ENVIRONMENT_HELP}`;
}

export function commandHelp(name: string): string {
  const command = COMMANDS[name]!;
  const flags = Object.entries({ ...command.flags, ...command.switches }).map(
    ([flag, help]) => `  --${flag.padEnd(22)} ${help}${command.required?.includes(flag) ? " (required)" : ""}`,
  );
  return `${command.summary}

Usage: npm run admin -- ${command.usage}
${flags.length ? `\nOptions:\n${flags.join("\n")}\n` : ""}
${ENVIRONMENT_HELP}`;
}

/** A mistake in the command line: exit 2 with the message and where to find help. */
export class UsageError extends Error {
  override name = "UsageError";
}

export interface CliIo {
  /** The settings to read instead of the process's environment (config.ts reads that). */
  env?: Record<string, string | undefined>;
  fetch?: (input: Request) => Promise<Response>;
  out?: (text: string) => void;
  err?: (text: string) => void;
}

/**
 * Why a request failed, for the operator: a server without the operator API answers 404 on every
 * path, as it does for an unknown brand. A list that always exists tells the two apart.
 */
async function explainFailure(client: AdminClient, adminUrl: string, answer: Answer): Promise<string> {
  const { status } = answer.response;
  if (status === 401)
    return `the server at ${adminUrl} refused the operator token: set ADMIN_TOKEN to the server's own.`;
  if (status === 404) {
    const probe = await client.GET("/brands");
    if (probe.response.status === 404)
      return `the server at ${adminUrl} has no operator API: start it with ADMIN_TOKEN set (or check ADMIN_URL).`;
  }
  const error = (answer.error as { error?: { code?: string; message?: string } } | undefined)?.error;
  return error?.code ? `${error.code}: ${error.message}` : `HTTP ${status}`;
}

/** The command a command line names, and the arguments after its words; null when it names none. */
function findCommand(argv: string[]): { name: string; rest: string[] } | null {
  const [first = "", second = ""] = argv;
  const name = `${first} ${second}`;
  if (COMMANDS[name]) return { name, rest: argv.slice(2) };
  // `deliveries --brand …` is how the first version of this CLI listed deliveries.
  if (first === "deliveries" && (second === "" || second.startsWith("-")))
    return { name: "deliveries list", rest: argv.slice(1) };
  return null;
}

/**
 * Runs one command line; resolves with the exit code (0 done, 1 refused or unreachable, 2 usage).
 * Every line it prints is terminal-safe (sdk/terminal-text.ts): it prints names, URLs and errors
 * that members and partners chose.
 */
export async function runAdmin(
  argv: string[],
  { env, fetch = globalThis.fetch, out: rawOut = console.log, err: rawErr = console.error }: CliIo = {},
): Promise<number> {
  const out = (line: string) => rawOut(terminalSafe(line));
  const err = (line: string) => rawErr(terminalSafe(line));
  const help = argv.includes("--help") || argv.includes("-h") || argv[0] === "help";
  if (argv[0] === "backup" || argv[0] === "restore")
    return runBackupCommand(argv, { env: env ?? process.env, fetch, out, err });
  const found = findCommand(argv);
  if (!found) {
    if (help || argv.length === 0) {
      (help ? out : err)(topHelp());
      return help ? 0 : 2;
    }
    err(
      `admin: unknown command "${argv
        .filter((arg) => !arg.startsWith("-"))
        .slice(0, 2)
        .join(" ")}". Run npm run admin -- --help for the list.`,
    );
    return 2;
  }
  const command = COMMANDS[found.name]!;
  if (help) {
    out(commandHelp(found.name));
    return 0;
  }
  const usageError = (message: string) => {
    err(`admin ${found.name}: ${message}\nUsage: npm run admin -- ${command.usage}   (--help for more)`);
    return 2;
  };

  let values: Values;
  let argument: string;
  try {
    const parsed = parseArgs({
      args: found.rest,
      allowPositionals: true,
      options: Object.fromEntries([
        ...Object.keys(command.flags ?? {}).map((flag) => [flag, { type: "string" as const }]),
        ...Object.keys(command.switches ?? {}).map((flag) => [flag, { type: "boolean" as const }]),
      ]),
    });
    values = parsed.values as Values;
    const missing = (command.required ?? []).filter((flag) => values[flag] === undefined);
    if (missing.length)
      return usageError(
        `${missing.map((flag) => `--${flag}`).join(", ")} ${missing.length === 1 ? "is" : "are"} required`,
      );
    if (command.argument && parsed.positionals.length !== 1) return usageError(`give one <${command.argument}>`);
    if (!command.argument && parsed.positionals.length)
      return usageError(`unexpected argument "${parsed.positionals[0]}"`);
    argument = parsed.positionals[0] ?? "";
  } catch (error) {
    return usageError((error as Error).message);
  }

  let adminUrl: string;
  let client: AdminClient;
  try {
    const config = loadCliConfig(env);
    adminUrl = config.adminUrl;
    client = adminClient(adminUrl, config.adminToken, fetch);
  } catch (error) {
    err(`admin: ${(error as Error).message}`);
    return 2;
  }

  let answer: Answer;
  try {
    answer = await command.run(client, values, argument);
  } catch (error) {
    if (error instanceof UsageError) return usageError(error.message);
    // Node names the cause; for a host with several addresses (localhost) inside an AggregateError.
    const { cause } = error as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } };
    const code = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message;
    err(
      `admin: cannot reach the operator API at ${adminUrl}${code ? ` (${code})` : ""}: is the server running? Set ADMIN_URL (or PORT) to where it listens.`,
    );
    return 1;
  }
  if (answer.response.ok) {
    out(JSON.stringify(answer.data, null, 2));
    return 0;
  }
  err(`admin ${found.name}: ${await explainFailure(client, adminUrl, answer)}`);
  return 1;
}

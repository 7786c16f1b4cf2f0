/**
 * Operator CLI, a thin client of the operator API (/admin/v1): `npm run admin -- --help` lists the
 * commands, `npm run admin -- <command> --help` their options. The commands are in operator-cli.ts.
 */
import { runAdmin } from "./operator-cli.ts";

process.exitCode = await runAdmin(process.argv.slice(2));

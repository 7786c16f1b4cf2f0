/** The two operations without a key: discovery and the creator list (spec §4 GET /, GET /creators). */
import { check, expectEqual, expectStatus } from "../check.ts";
import type { Scenario } from "../scenario.ts";

export const publicScenarios: Scenario[] = [
  {
    name: "discovery lists every endpoint with its scope",
    tag: "contract",
    async run(ctx) {
      const answer = await ctx.call("GET", "/", { key: null });
      expectStatus(answer, 200);
      expectEqual(answer.body.version, "v1", "discovery version");
      for (const op of ctx.contract.publicOperations) {
        const description = answer.body.endpoints?.[`${op.method} ${op.path}`];
        check(typeof description === "string", `endpoints has no entry for ${op.method} ${op.path}`);
        check(
          description.includes(op.scope ?? "none"),
          `endpoints["${op.method} ${op.path}"] does not name its scope ${op.scope ?? "none"}`,
        );
      }
    },
  },
  {
    name: "creators are sorted by name and cacheable for 60 s",
    tag: "contract",
    async run(ctx) {
      const answer = await ctx.call("GET", "/creators", { key: null });
      expectStatus(answer, 200);
      expectEqual(answer.headers.get("cache-control"), "public, max-age=60", "Cache-Control");
      const names: string[] = answer.body.creators.map((creator: { name: string }) => creator.name);
      check(names.length > 0, "GET /creators listed no creator");
      // Code-unit order: the spec says "sorted by name" and names no locale.
      names.slice(1).forEach((name, i) => {
        check(names[i]! <= name, `creators out of order: "${names[i]}" before "${name}"`);
      });
    },
  },
];

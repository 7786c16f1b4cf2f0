/**
 * Part of the build: the empty embedded database a new data directory starts as, made by
 * PGlite's initdb once here rather than at the server's first start
 * (server/store/embedded-template.ts). About 40 MB under build/database-template/.
 */
import { makeTemplate, pgliteVersion } from "../server/store/embedded-template.ts";

const started = performance.now();
const dir = await makeTemplate();
console.log(
  `database template: ${dir} (PGlite ${pgliteVersion()}, made in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
);

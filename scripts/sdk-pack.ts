/**
 * `npm run sdk:pack [-- --destination <dir>]`: builds the SDK and packs it into
 * <dir>/<name>-<version>.tgz (default build/; see sdk-package.ts). Two packs of the same sources
 * are byte-identical.
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildSdk, DEFAULT_PACK_DESTINATION, formatBytes, packSdk, relativeToRoot } from "./sdk-package.ts";

try {
  const { values } = parseArgs({ options: { destination: { type: "string" } } });
  const destination = values.destination ? resolve(values.destination) : DEFAULT_PACK_DESTINATION;
  const { dir, name, version } = await buildSdk(values.destination ? { dir: join(destination, "sdk") } : {});
  const { tarball, size, unpackedSize, files } = packSdk(dir, destination);
  console.log(`Packed ${name} ${version}: ${relativeToRoot(tarball)}`);
  console.log(`  ${formatBytes(size)} packed, ${formatBytes(unpackedSize)} unpacked, ${files.length} files:`);
  for (const file of files) console.log(`    ${file}`);
  console.log(`Install it elsewhere with: npm install ${tarball}`);
} catch (error) {
  console.error(`sdk:pack: ${(error as Error).message}`);
  process.exitCode = 1;
}

/** `npm run sdk:pack`: builds the SDK and packs it into build/<name>-<version>.tgz (see sdk-package.ts). */
import { buildSdk, formatBytes, packSdk, relativeToRoot } from "./sdk-package.ts";

try {
  const { dir, name, version } = await buildSdk();
  const { tarball, size, unpackedSize, files } = packSdk(dir);
  console.log(`Packed ${name} ${version}: ${relativeToRoot(tarball)}`);
  console.log(`  ${formatBytes(size)} packed, ${formatBytes(unpackedSize)} unpacked, ${files.length} files:`);
  for (const file of files) console.log(`    ${file}`);
  console.log(`Install it elsewhere with: npm install ${tarball}`);
} catch (error) {
  console.error(`sdk:pack: ${(error as Error).message}`);
  process.exitCode = 1;
}

/** `npm run sdk:build`: compiles sdk/ into the package directory build/sdk (see sdk-package.ts). */
import { buildSdk, relativeToRoot } from "./sdk-package.ts";

try {
  const { dir, name, version } = await buildSdk();
  console.log(`Built ${name} ${version} in ${relativeToRoot(dir)}; npm run sdk:pack makes the tarball.`);
} catch (error) {
  console.error(`sdk:build: ${(error as Error).message}`);
  process.exitCode = 1;
}

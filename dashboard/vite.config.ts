import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));
/** The API server the dev server forwards to (npm start listens on 8080 by default). */
const apiTarget = "http://localhost:8080";

/**
 * The dashboard's single-page app. `npm run build` writes it to build/dashboard/, which the
 * server serves at /dashboard under a strict CSP: no inline script or style, nothing from
 * another host, so every asset is a file of the build.
 */
export default defineConfig({
  root,
  base: "/dashboard/",
  publicDir: false,
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../build/dashboard", import.meta.url)),
    emptyOutDir: true,
    // Inlined assets would become data: URLs in the CSS, which style-src 'self' refuses for fonts.
    assetsInlineLimit: 0,
    reportCompressedSize: true,
  },
  server: {
    // The server's CSRF check wants its own origin: the proxy presents it.
    // /api/v1 for the public GET /creators, which the start-stream form lists.
    proxy: {
      "/dashboard/api": { target: apiTarget, changeOrigin: true, headers: { origin: apiTarget } },
      "/api/v1": { target: apiTarget, changeOrigin: true },
    },
  },
});

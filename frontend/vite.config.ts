import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// `npm run dev` proxies the API to a `kandev serve` on 8420 (KANDEV_API to change it).
const api = process.env.KANDEV_API ?? "http://127.0.0.1:8420";

export default defineConfig({
  base: "/",
  plugins: [react()],
  build: { outDir: "dist", sourcemap: false, chunkSizeWarningLimit: 800 },
  // The diff viewer highlights code in a module worker (its grammars load as chunks of their own).
  worker: { format: "es" },
  server: {
    proxy: {
      "/graphql": { target: api, ws: true, changeOrigin: true },
      "/healthz": { target: api },
    },
  },
});

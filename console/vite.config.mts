import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console, built into the service's output (dist/console) and served by it under /admin. JSX is
// compiled by Vite's own transformer for Preact; every asset is a hashed file (no inline script or
// style, which the console's Content-Security-Policy forbids).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/admin/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});

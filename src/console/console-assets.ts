import { NestExpressApplication } from '@nestjs/platform-express';
import type { Response } from 'express';
import { existsSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';

/** Where the browser console is served. */
export const CONSOLE_PATH = '/admin';

/**
 * The console's own policy: its code and styles come from the service alone (no inline script or
 * style, no CDN, no external fonts), and it talks only to the service's /api.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Serves the built console (`npm run build` writes it to dist/console) under /admin as static files:
 * it is code only, every datum it shows comes from /api with the key its user signs in with, so no
 * route here reads anything of a profile. Hashed assets never change and are cached for a year;
 * index.html is revalidated on every load so that a new build is picked up at once. Nothing is served
 * when the console has not been built.
 */
export function serveConsole(app: NestExpressApplication, root = consoleBuildDir()): boolean {
  if (!existsSync(join(root, 'index.html'))) return false;
  const assets = `${sep}assets${sep}`;
  app.useStaticAssets(root, {
    prefix: CONSOLE_PATH,
    index: 'index.html',
    fallthrough: true,
    setHeaders: (res: Response, path: string) => {
      res.setHeader('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
      res.setHeader(
        'Cache-Control',
        path.includes(assets) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
  return true;
}

/** dist/console of the project this code belongs to, whether it runs from dist/src or from src. */
export function consoleBuildDir(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  // dist/ holds a copy of package.json (nest build); the project is the folder above it
  if (dir.endsWith(`${sep}dist`)) dir = dirname(dir);
  return join(dir, 'dist', 'console');
}

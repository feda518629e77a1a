import type { TestApp } from './test-app';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

/**
 * The routes the app's router serves, as `METHOD /path/{param}`, leaving out the docs (`/docs...`, and
 * the root, which redirects to the console).
 */
export function servedRoutes(t: TestApp): string[] {
  const router = (t.app.getHttpAdapter().getInstance() as { router: { stack: Layer[] } }).router;
  const routes: string[] = [];
  for (const layer of router.stack) {
    // a wildcard is the catch-all under which Nest runs module middleware (the logger's), not a route
    if (!layer.route || layer.route.path.includes('*')) continue;
    const path = layer.route.path.replace(/:(\w+)/g, '{$1}');
    if (path.startsWith('/docs') || path === '/') continue;
    for (const method of Object.keys(layer.route.methods)) routes.push(`${method.toUpperCase()} ${path}`);
  }
  return routes;
}

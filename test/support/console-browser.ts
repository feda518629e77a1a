import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { consoleBuildDir } from '../../src/console/console-assets';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it when it is missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * One headless Chromium for a test file. The flags keep it off the network it would otherwise reach
 * for at start (updates, sync, safe browsing), which this machine's closed network refuses.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!readFileSync(join(consoleBuildDir(), 'index.html'), 'utf8').includes('/admin/assets/')) {
    throw new Error('the console is not built: run npm run build');
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-gpu',
    ],
  });
}

/** Where a run's screenshots go: test-results/console/<project>/<name>.png. */
export function screenshotDir(): string {
  const project = process.env.DATABASE_URL === undefined ? 'embedded' : 'postgres';
  const dir = join(__dirname, '..', '..', 'test-results', 'console', project);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(screenshotDir(), `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown }>;
}

/**
 * axe-core's serious and critical violations of the page as it is now. axe is evaluated through the
 * DevTools protocol, not as a script tag, so the console's Content-Security-Policy stays in force.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<AxeViolation[]>('axe.run().then((result) => result.violations)');
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(({ id, impact, help, nodes }) => ({
      id,
      impact,
      help,
      nodes: nodes.map(({ target }) => ({ target })),
    }));
}

/** The console's pages report any Content-Security-Policy refusal on the browser's console. */
export function collectPolicyViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) seen.push(message.text());
  });
  page.on('pageerror', (error) => seen.push(`page error: ${error.message}`));
  return seen;
}

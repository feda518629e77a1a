import type { Browser, Page } from 'playwright-core';
import { makeMemory, makeProfile, putTrait } from './support/factories';
import {
  collectPolicyViolations,
  launchBrowser,
  screenshot,
  seriousViolations,
} from './support/console-browser';
import { useTestApp } from './support/test-app';

const ROOT_KEY = 'console-root-0123456789-abcdefghij';

/**
 * The console's keys, applications and audit pages, and what a scoped key is offered. These need the
 * service's applications and scoped keys (GET /api/keys/current, /api/keys, /api/applications,
 * /api/audit): on a service without them this file fails.
 */
describe('Console in the browser: applications, keys and the audit trail', () => {
  const t = useTestApp({ serviceKey: ROOT_KEY });
  let browser: Browser;
  let page: Page;
  let policyViolations: string[];

  beforeAll(async () => {
    browser = await launchBrowser();
  }, 120_000);

  beforeEach(async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    policyViolations = collectPolicyViolations(page);
  });

  afterEach(async () => {
    await page.context().close();
    expect(policyViolations).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
  });

  async function signIn(key: string): Promise<void> {
    await page.goto(`${t.url}/admin/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function expectAccessible(name: string): Promise<void> {
    await screenshot(page, name);
    expect(await seriousViolations(page)).toEqual([]);
  }

  async function createKey(scopes: string[], application = 'default'): Promise<string> {
    const res = await t
      .admin()
      .post('/api/keys')
      .send({ application, scopes, name: `console ${scopes.join('+')}` })
      .expect(201);
    return res.body.secret as string;
  }

  it('the root key manages applications and keys, and reads the audit trail', async () => {
    await signIn(ROOT_KEY);
    await page.getByRole('link', { name: 'Applications' }).click();
    await page.getByLabel('New application').fill('support-bot');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('rowheader', { name: 'support-bot' }).waitFor();
    await expectAccessible('applications');

    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('support reader');
    await page.getByLabel('Application').selectOption({ label: 'support-bot' });
    await page.getByRole('checkbox', { name: 'proxy' }).uncheck();
    await page.getByRole('checkbox', { name: 'read' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.locator('code.secret').innerText();
    expect(secret).toMatch(/^pms_/);
    await page.getByRole('rowheader', { name: 'support reader' }).waitFor();
    await expectAccessible('keys');

    await page.getByRole('button', { name: 'Revoke support reader' }).click();
    await page.getByRole('rowheader', { name: 'support reader' }).waitFor({ state: 'detached' });

    await page.getByRole('link', { name: 'Audit trail' }).click();
    await page.getByRole('cell', { name: /key/ }).first().waitFor();
    await expectAccessible('audit');
  });

  it('a read-only key sees profiles but is offered no change and no keys', async () => {
    const profile = await makeProfile(t, 'reader-sees-me');
    await putTrait(t, profile.id, 'name', 'Rita');
    await makeMemory(t, profile.id, { content: 'Reads a lot' });
    await signIn(await createKey(['read']));
    await page.getByRole('link', { name: 'reader-sees-me' }).click();
    await page.getByText('Reads a lot').waitFor();
    for (const name of ['Edit name', 'Delete name', 'Erase…', 'Edit summary', 'Learn']) {
      expect(await page.getByRole('button', { name, exact: true }).count()).toBe(0);
    }
    expect(await page.getByRole('link', { name: 'Keys' }).count()).toBe(0);
    await expectAccessible('profile-read-only');
  });

  it('a proxy key is told the console needs the read scope', async () => {
    await signIn(await createKey(['proxy']));
    await page.getByText('the console needs a key with the read scope').waitFor();
    expect(await page.getByRole('link', { name: 'Profiles' }).count()).toBe(1);
  });
});

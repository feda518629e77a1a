import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../src/console/console-assets';
import { makeMemory, makeProfile, putTrait } from './support/factories';
import {
  collectPolicyViolations,
  launchBrowser,
  screenshot,
  seriousViolations,
} from './support/console-browser';
import { useTestApp } from './support/test-app';

const API_KEY = 'console-key-0123456789-abcdefghij';
const STEP_MS = 15_000;

/**
 * The console in a real browser (Debian's Chromium through playwright-core) against the real service:
 * what an operator does, page by page, with each page checked by axe-core and photographed.
 */
describe('Console in the browser', () => {
  const t = useTestApp({ upstream: 'openai', serviceKey: API_KEY });
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let policyViolations: string[];

  beforeAll(async () => {
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(STEP_MS);
    page = await context.newPage();
    policyViolations = collectPolicyViolations(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  afterEach(() => {
    expect(policyViolations).toEqual([]);
  });

  const admin = (path = '') => `${t.url}/admin/${path}`;

  async function expectAccessible(name: string): Promise<void> {
    await screenshot(page, name);
    expect(await seriousViolations(page)).toEqual([]);
  }

  it('serves the console under /admin with a strict policy, index revalidated and hashed assets immutable', async () => {
    const index = await fetch(admin());
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    expect(html).not.toMatch(/https?:\/\//); // nothing from another origin
    const assets = [...html.matchAll(/(?:src|href)="(\/admin\/assets\/[^"]+)"/g)].map((match) => match[1]);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      const res = await fetch(`${t.url}${asset}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(await res.text()).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z]/i);
    }
    const bare = await fetch(`${t.url}/admin`);
    expect(bare.url).toBe(admin());
    expect(bare.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
  });

  it('refuses a wrong key in words and keeps nothing of it', async () => {
    await page.goto(admin());
    await expectAccessible('sign-in');
    await page.getByLabel('API key').fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const words = await alert.innerText();
    expect(words).toMatch(/key/i);
    expect(words).not.toMatch(/[{}"]/);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it('signs in, finds a user and opens the profile', async () => {
    await makeProfile(t, 'someone-else');
    const alice = await makeProfile(t, 'alice-console');
    await putTrait(t, alice.id, 'name', 'Alice');
    await makeMemory(t, alice.id, { content: 'Keeps bees on the roof', type: 'fact', importance: 0.9 });
    await makeMemory(t, alice.id, { content: 'Is allergic to peanuts', type: 'fact', importance: 0.8 });
    // a chat through the proxy: the console shows what was injected for it
    const chat = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${API_KEY}`,
        'Content-Type': 'application/json',
        'X-Service-Id': 'alice-console',
      },
      body: JSON.stringify({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'What about my bees?' }],
      }),
    });
    expect(chat.status).toBe(200);
    await t.drain();

    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Profiles' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(1);
    await page.getByRole('link', { name: 'alice-console' }).waitFor();
    // keys, applications and the audit trail are offered only where the service has them
    const tenancy = (await t.admin().get('/api/keys/current')).status !== 404;
    expect(await page.getByRole('link', { name: 'Keys' }).count()).toBe(tenancy ? 1 : 0);
    await expectAccessible('profiles');

    await page.getByLabel('User id').fill('alice');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Profiles 1–1 of 1').waitFor();
    const row = page.getByRole('row', { name: /alice-console/ });
    expect(await row.innerText()).toMatch(/alice-console\s+1\s+2\s+2\s+/); // 1 trait, 2 memories, 2 messages
    await page.getByRole('link', { name: 'alice-console' }).click();
    await page.getByRole('heading', { name: /alice-console/ }).waitFor();
    const turn = page.locator('.turns > li').first();
    await turn.getByText('User: What about my bees?').waitFor();
    expect(await turn.innerText()).toMatch(/Answer: echo: What about my bees\?/);
    expect(await turn.innerText()).toMatch(/memories:.*Keeps bees on the roof/);
    await expectAccessible('profile');
  });

  it('edits a trait and reverts it from its history', async () => {
    const trait = page.locator('tr[data-trait="name"]');
    await page.getByRole('button', { name: 'Edit name' }).click();
    await page.getByLabel('New value of name').fill('Alicia');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await trait.getByText('Alicia').waitFor();
    expect(await trait.innerText()).toMatch(/set by hand/);

    await page.getByRole('button', { name: 'History of name' }).click();
    await page.getByRole('button', { name: 'Revert to Alice' }).click();
    await trait.locator('.trait-value', { hasText: /^Alice$/ }).waitFor();
    await page
      .getByRole('region', { name: 'History of name' })
      .getByText(/reverted/)
      .waitFor();
    await expectAccessible('trait-history');
  });

  it('supersedes a memory by what the user says next, shows what replaced it, and deletes one', async () => {
    const memories = page.locator('.memories');
    await page.getByLabel('Learn from text').fill('I live in Berlin.');
    await page.getByRole('button', { name: 'Learn', exact: true }).click();
    await memories.getByText(/Berlin/).waitFor();
    await page.getByLabel('Learn from text').fill('I live in Lisbon.');
    await page.getByRole('button', { name: 'Learn', exact: true }).click();
    await memories.getByText(/Lisbon/).waitFor();
    expect(await memories.innerText()).not.toMatch(/Berlin/); // current memories only

    await page.getByLabel('Show superseded memories').check();
    const old = page.locator('.memories li.superseded', { hasText: 'Berlin' });
    await old.locator('.replacement', { hasText: 'Lisbon' }).waitFor();
    await expectAccessible('memories-superseded');

    const peanuts = page.locator('.memories li', { hasText: 'Is allergic to peanuts' });
    await peanuts.getByRole('button', { name: 'Delete' }).click();
    await peanuts.waitFor({ state: 'detached' });
    const left = await t.admin().get('/api/profiles/alice-console/memories?include=superseded').expect(200);
    expect(left.body.memories.map((m: { content: string }) => m.content)).not.toContain(
      'Is allergic to peanuts',
    );
  });

  it('asks a question and shows the memories that would be injected, with scores', async () => {
    await page.getByLabel('Question').fill('Tell me about the bees');
    await page.getByRole('button', { name: 'Show what would be injected' }).click();
    const injected = page.locator('.injected-memories');
    await injected.getByText('Keeps bees on the roof').waitFor();
    expect(await injected.innerText()).toMatch(/score \d\.\d{3}/);
    await expectAccessible('ask');
  });

  it('shows an error from the API in words, not JSON', async () => {
    await page.getByRole('button', { name: 'Edit name' }).click();
    await page.getByLabel('New value of name').fill('x'.repeat(20_000));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.locator('#traits-title').locator('xpath=../..').getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).not.toMatch(/[{}]/);
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('erases the profile after a confirmation that names the user and the counts, and it is gone', async () => {
    await page.getByRole('button', { name: 'Erase…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Erase alice-console?' });
    await dialog.waitFor();
    expect(await dialog.innerText()).toMatch(/alice-console with its 2 traits, 3 memories and 2 messages/);
    await expectAccessible('erase-confirmation');
    await dialog.getByRole('button', { name: 'Erase alice-console for good' }).click();
    await page.getByText('Erased alice-console: 2 traits, 3 memories, 2 messages.').waitFor();
    await page.getByLabel('User id').fill('alice-console');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No profile matches.').waitFor();
    await t.admin().get('/api/profiles/alice-console').expect(404);
  });
});

import OpenAI from 'openai';
import { servedRoutes } from './support/served-routes';
import { randomUUID } from 'node:crypto';
import { expectEnvelope, ISO_TIMESTAMP, UUID } from './support/factories';
import { useTestApp } from './support/test-app';

const ROOT = 'root-key-0123456789-abcdefghij';
const SCOPES = ['proxy', 'read', 'write', 'admin'] as const;
type Scope = (typeof SCOPES)[number];

interface Operation {
  'x-access'?: string;
  'x-required-scope'?: string;
}

interface Fixture {
  profileId: string;
  memoryId: string;
  traitKey: string;
}

/** A valid body for the routes that take one, so that a refusal is about access, never about the input. */
const BODIES: Record<string, object> = {
  'PATCH /api/profiles/{id}': { summary: 'Set by hand.' },
  'PATCH /api/profiles/{id}/memories/{memoryId}': { importance: 0.5 },
  'POST /api/profiles/{id}/context': { question: 'Where do I live?' },
  'POST /api/profiles/{id}/ingest': { data: 'I live in Oslo.' },
  'POST /api/profiles/{id}/memories': { content: 'Likes long walks.', type: 'fact' },
  'POST /api/profiles/{id}/traits/{key}/revert': { historyId: randomUUID() },
  'PUT /api/profiles/{id}/traits/{key}': { value: 'Bergen' },
};

describe('Applications, scoped keys and isolated profiles', () => {
  // the per-address limit is not what this file tests, and the matrix alone sends hundreds of requests
  const t = useTestApp({ upstream: 'openai', serviceKey: ROOT, env: { RATE_LIMIT_PER_MINUTE: '0' } });
  const root = { Authorization: `Bearer ${ROOT}` };
  const inApp = (name: string) => ({ ...root, 'X-Service-Application': name });

  const createApplication = async (name: string): Promise<string> => {
    const res = await t.api().post('/api/applications').set(root).send({ name }).expect(201);
    expect(res.body.application).toEqual({
      id: expect.stringMatching(UUID),
      name,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    return res.body.application.id as string;
  };

  const createKey = async (application: string, scopes: Scope[], extra: object = {}) => {
    const res = await t
      .api()
      .post('/api/keys')
      .set(root)
      .send({ application, scopes, name: `${application} ${scopes.join('+')}`, ...extra })
      .expect(201);
    return res.body as { key: { id: string; prefix: string }; secret: string };
  };

  /** A profile of the application with a memory and a trait, made with the root key. */
  const makeFixture = async (application: string): Promise<Fixture> => {
    const profile = await t
      .api()
      .post('/api/profiles')
      .set(inApp(application))
      .send({ externalId: `user-${randomUUID()}` })
      .expect(201);
    const profileId = profile.body.profile.id as string;
    const memory = await t
      .api()
      .post(`/api/profiles/${profileId}/memories`)
      .set(inApp(application))
      .send({ content: `Works on project ${randomUUID()}`, type: 'fact' })
      .expect(201);
    await t
      .api()
      .put(`/api/profiles/${profileId}/traits/city`)
      .set(inApp(application))
      .send({ value: 'Oslo' })
      .expect(200);
    return { profileId, memoryId: memory.body.memory.id as string, traitKey: 'city' };
  };

  describe('the matrix: every route x every scope x own and other application', () => {
    it("answers 403 insufficient_scope without the scope, 404 for the other application's profiles, and lets the rest through", async () => {
      await createApplication('own');
      await createApplication('other');
      const keys = new Map<Scope, string>();
      for (const scope of SCOPES) keys.set(scope, (await createKey('own', [scope])).secret);
      const other = await makeFixture('other');
      const ownReadOnly = await makeFixture('own');
      const doc = (await t.api().get('/docs-json').expect(200)).body as {
        paths: Record<string, Record<string, Operation>>;
      };

      const routes = servedRoutes(t).sort();
      const undeclared: string[] = [];
      const failures: string[] = [];
      let cells = 0;
      for (const route of routes) {
        const [method, path] = route.split(' ');
        const op = doc.paths[path]?.[method.toLowerCase()];
        if (op?.['x-access'] === 'public') continue;
        const scope = op?.['x-required-scope'];
        if (scope === undefined) {
          undeclared.push(route);
          continue;
        }
        const namesProfile = path.startsWith('/api/profiles/{id}');
        for (const held of SCOPES) {
          for (const side of ['own', 'other'] as const) {
            cells++;
            // a fresh profile of its own for each call that may erase or change it
            const target =
              side === 'other' ? other : method === 'GET' ? ownReadOnly : await makeFixture('own');
            const concrete = path
              .replace('{id}', path.startsWith('/api/keys') ? randomUUID() : target.profileId)
              .replace('{memoryId}', target.memoryId)
              .replace('{key}', target.traitKey);
            const res = await t
              .api()
              [method.toLowerCase() as 'get'](concrete)
              .set('Authorization', `Bearer ${keys.get(held)}`)
              .set('X-Service-Id', `matrix-${side}`)
              .send(BODIES[route] ?? {});
            const allowed = scope === 'any' || scope === held;
            const where = `${route} with a ${held} key, ${side} application`;
            const code = res.body?.error?.code as string | undefined;
            if (!allowed) {
              if (res.status !== 403 || code !== 'insufficient_scope')
                failures.push(`${where}: ${res.status} ${code}`);
            } else if (namesProfile && side === 'other') {
              if (res.status !== 404 || code !== 'profile_not_found')
                failures.push(`${where}: ${res.status} ${code}`);
            } else if ([401, 403].includes(res.status) || code === 'profile_not_found') {
              failures.push(`${where}: ${res.status} ${code}`);
            }
          }
        }
      }
      // the matrix's size, for the record
      console.log(`access matrix: ${routes.length} routes, ${cells} cells`);
      expect(undeclared).toEqual([]);
      expect(failures).toEqual([]);
      expect(cells).toBeGreaterThan(200);
    }, 600_000);
  });

  it('names the scope a key lacks', async () => {
    await createApplication('scoped');
    const { secret } = await createKey('scoped', ['proxy']);
    const res = await t.api().get('/api/profiles').set('Authorization', `Bearer ${secret}`).expect(403);
    const error = expectEnvelope(res.body, 'insufficient_scope');
    expect(error.message).toContain('"read"');
    expect(error.type).toBe('permission_error');
  });

  it('keeps two applications\' user "42" apart: separate profiles, separate memories, through the proxy too', async () => {
    await createApplication('support');
    await createApplication('sales');
    const support = await createKey('support', ['proxy', 'read']);
    const sales = await createKey('sales', ['proxy', 'read']);
    const chat = (secret: string, content: string) =>
      new OpenAI({ apiKey: secret, baseURL: `${t.url}/v1` }).chat.completions.create(
        { model: 'fake-model', messages: [{ role: 'user', content }] },
        { headers: { 'X-Service-Id': '42' } },
      );
    await chat(support.secret, 'I live in Bergen and I love sailing.');
    await t.drain();
    await chat(sales.secret, 'What should I wear today?');
    await t.drain();

    const supportProfile = await t
      .api()
      .get('/api/profiles/42')
      .set('Authorization', `Bearer ${support.secret}`)
      .expect(200);
    const salesProfile = await t
      .api()
      .get('/api/profiles/42')
      .set('Authorization', `Bearer ${sales.secret}`)
      .expect(200);
    expect(supportProfile.body.profile.id).not.toBe(salesProfile.body.profile.id);
    expect(JSON.stringify(salesProfile.body)).not.toContain('Bergen');
    expect(JSON.stringify(supportProfile.body)).toContain('Bergen');
    // what the proxy sent upstream for sales' "42" carries nothing of support's
    expect(JSON.stringify(t.upstream.requests.at(-1)?.body)).not.toContain('Bergen');

    const listed = await t
      .api()
      .get('/api/profiles')
      .set('Authorization', `Bearer ${sales.secret}`)
      .expect(200);
    expect(listed.body.profiles.map((p: { id: string }) => p.id)).toEqual([salesProfile.body.profile.id]);
  });

  it("keeps MCP tools in the key's application", async () => {
    await createApplication('mcp-a');
    await createApplication('mcp-b');
    const a = await createKey('mcp-a', ['proxy']);
    const b = await createKey('mcp-b', ['proxy']);
    const call = (secret: string, name: string, args: object) =>
      t
        .api()
        .post('/mcp')
        .set({
          Authorization: `Bearer ${secret}`,
          'X-Service-Id': 'tool-user',
          Accept: 'application/json, text/event-stream',
        })
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } })
        .expect(200);
    await call(a.secret, 'remember', { content: 'Prefers tea over coffee' });
    const seen = await call(b.secret, 'get_profile', {});
    expect(seen.text).not.toContain('tea over coffee');
    const own = await call(a.secret, 'get_profile', {});
    expect(own.text).toContain('tea over coffee');
  });

  describe('keys', () => {
    it('shows the secret once, stores only its hash, and lists keys without secrets', async () => {
      await createApplication('keys-app');
      const created = await createKey('keys-app', ['read', 'write'], {
        expiresAt: '2999-01-01T00:00:00.000Z',
      });
      expect(created.secret).toMatch(/^pms_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
      expect(created.key).toEqual({
        id: expect.stringMatching(UUID),
        name: 'keys-app read+write',
        prefix: created.secret.split('_')[1],
        application: { id: expect.stringMatching(UUID), name: 'keys-app' },
        scopes: ['read', 'write'],
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
        expiresAt: '2999-01-01T00:00:00.000Z',
        lastUsedAt: null,
        revokedAt: null,
      });
      const stored = JSON.stringify(await t.dataSource.query(`SELECT * FROM api_keys`));
      expect(stored).not.toContain(created.secret.split('_')[2]);
      const listed = await t.api().get('/api/keys').set(root).expect(200);
      expect(JSON.stringify(listed.body)).not.toContain(created.secret);
      expect(listed.body.keys.map((key: { id: string }) => key.id)).toContain(created.key.id);

      await t.api().get('/api/profiles').set('Authorization', `Bearer ${created.secret}`).expect(200);
      await t.drain();
      const used = await t.api().get('/api/keys').set(root).expect(200);
      const key = used.body.keys.find((candidate: { id: string }) => candidate.id === created.key.id);
      expect(key.lastUsedAt).toMatch(ISO_TIMESTAMP);
    });

    it('refuses a revoked, an expired, a made-up and a tampered key with 401', async () => {
      await createApplication('dead-keys');
      const revoked = await createKey('dead-keys', ['read']);
      await t.api().get('/api/profiles').set('Authorization', `Bearer ${revoked.secret}`).expect(200);
      const res = await t.api().delete(`/api/keys/${revoked.key.id}`).set(root).expect(200);
      expect(res.body.key.revokedAt).toMatch(ISO_TIMESTAMP);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const expired = await createKey('dead-keys', ['read'], {
        expiresAt: new Date(Date.now() + 1_500).toISOString(),
      });
      await new Promise((resolve) => setTimeout(resolve, 1_600));
      const tampered = `${revoked.secret.slice(0, -1)}${revoked.secret.endsWith('A') ? 'B' : 'A'}`;
      for (const secret of [revoked.secret, expired.secret, tampered, `pms_000000000000_${'x'.repeat(43)}`]) {
        const refused = await t
          .api()
          .get('/api/profiles')
          .set('Authorization', `Bearer ${secret}`)
          .expect(401);
        expectEnvelope(refused.body, 'invalid_api_key');
      }
    });

    it('says which key a request carries (GET /api/keys/current), for the root key and an application key', async () => {
      const app = await createApplication('current-app');
      const rootKey = await t.api().get('/api/keys/current').set(inApp('current-app')).expect(200);
      expect(rootKey.body).toEqual({
        key: {
          id: null,
          name: 'SERVICE_API_KEY',
          prefix: null,
          root: true,
          application: { id: app, name: 'current-app' },
          scopes: ['proxy', 'read', 'write', 'admin'],
        },
      });
      const proxy = await createKey('current-app', ['proxy']);
      const own = await t
        .api()
        .get('/api/keys/current')
        .set({ Authorization: `Bearer ${proxy.secret}`, 'X-Service-Application': 'default' })
        .expect(200);
      expect(own.body).toEqual({
        key: {
          id: proxy.key.id,
          name: 'current-app proxy',
          prefix: proxy.key.prefix,
          root: false,
          application: { id: app, name: 'current-app' },
          scopes: ['proxy'],
        },
      });
      const defaulted = await t.api().get('/api/keys/current').set(root).expect(200);
      expect(defaulted.body.key.application.name).toBe('default');
      const unknown = await t.api().get('/api/keys/current').set(inApp('no-such-app')).expect(404);
      expectEnvelope(unknown.body, 'application_not_found');
    });

    it("lets an application's admin key manage only its own application's keys", async () => {
      await createApplication('admin-a');
      await createApplication('admin-b');
      const admin = await createKey('admin-a', ['admin']);
      const foreign = await createKey('admin-b', ['read']);
      const auth = { Authorization: `Bearer ${admin.secret}` };
      const res = await t
        .api()
        .post('/api/keys')
        .set(auth)
        .send({ application: 'admin-b', scopes: ['read'], name: 'x' })
        .expect(404);
      expectEnvelope(res.body, 'application_not_found');
      await t.api().delete(`/api/keys/${foreign.key.id}`).set(auth).expect(404);
      const listed = await t.api().get('/api/keys').set(auth).expect(200);
      expect(
        listed.body.keys.every(
          (key: { application: { name: string } }) => key.application.name === 'admin-a',
        ),
      ).toBe(true);
      const apps = await t.api().get('/api/applications').set(auth).expect(200);
      expect(apps.body.applications.map((a: { name: string }) => a.name)).toEqual(['admin-a']);
      expectEnvelope(
        (await t.api().post('/api/applications').set(auth).send({ name: 'mine' }).expect(403)).body,
        'insufficient_scope',
      );
      await t
        .api()
        .post('/api/keys')
        .set(auth)
        .send({ application: 'admin-a', scopes: ['proxy'], name: 'bot' })
        .expect(201);
    });

    it('refuses bad key requests with a clear code', async () => {
      const cases: Array<[object, string]> = [
        [{ application: 'default', scopes: ['everything'], name: 'x' }, 'invalid_scopes'],
        [{ application: 'default', scopes: [], name: 'x' }, 'invalid_scopes'],
        [{ application: 'default', scopes: ['read'] }, 'invalid_name'],
        [
          { application: 'default', scopes: ['read'], name: 'x', expiresAt: 'tomorrow' },
          'invalid_expires_at',
        ],
        [
          { application: 'default', scopes: ['read'], name: 'x', expiresAt: '2001-01-01T00:00:00Z' },
          'invalid_expires_at',
        ],
        [{ application: 'nowhere', scopes: ['read'], name: 'x' }, 'application_not_found'],
      ];
      for (const [body, code] of cases) {
        const res = await t.api().post('/api/keys').set(root).send(body);
        expect({ body, status: res.status >= 400 && res.status < 500, code: res.body.error?.code }).toEqual({
          body,
          status: true,
          code,
        });
      }
      expectEnvelope(
        (await t.api().post('/api/applications').set(root).send({ name: 'default' }).expect(409)).body,
        'application_exists',
      );
    });
  });

  describe('the audit trail', () => {
    it('records a retry of given-up learning and a purge, with the key that asked', async () => {
      await createApplication('retried');
      const writer = await createKey('retried', ['write']);
      const auth = { Authorization: `Bearer ${writer.secret}` };
      const fixture = await makeFixture('retried');
      await t.api().post(`/api/profiles/${fixture.profileId}/extraction/retry`).set(auth).expect(200);
      await t
        .api()
        .delete(`/api/profiles/${fixture.profileId}/memories/${fixture.memoryId}?purge=true`)
        .set(auth)
        .expect(200);
      const listed = await t
        .api()
        .get(`/api/audit?profile=${fixture.profileId}&limit=2`)
        .set(root)
        .expect(200);
      expect(
        (listed.body.events as Array<{ action: string; keyId: string }>).map((e) => [e.action, e.keyId]),
      ).toEqual([
        ['memory.purge', writer.key.id],
        ['extraction.retry', writer.key.id],
      ]);
    });

    it('records who erased a profile, keeps it after the erasure, pages newest first, and filters', async () => {
      await createApplication('audited');
      const admin = await createKey('audited', ['admin', 'read', 'write']);
      const auth = { Authorization: `Bearer ${admin.secret}`, 'X-Request-Id': 'erase-request-1' };
      const fixture = await makeFixture('audited');
      const exported = await t.api().get(`/api/profiles/${fixture.profileId}/export`).set(auth).expect(200);
      expect(exported.body.audit.map((event: { action: string }) => event.action)).toEqual([
        'profile.create',
        'memory.create',
        'trait.put',
        'profile.export',
      ]);
      await t.api().delete(`/api/profiles/${fixture.profileId}`).set(auth).expect(200);

      const erased = await t
        .api()
        .get(`/api/audit?profile=${fixture.profileId}&action=profile.erase`)
        .set(root)
        .expect(200);
      expect(erased.body).toEqual({
        events: [
          {
            id: expect.any(String),
            at: expect.stringMatching(ISO_TIMESTAMP),
            keyId: admin.key.id,
            application: expect.stringMatching(UUID),
            action: 'profile.erase',
            target: { profileId: fixture.profileId },
            requestId: 'erase-request-1',
            outcome: 'success',
          },
        ],
        next: null,
      });

      const first = await t
        .api()
        .get(`/api/audit?profile=${fixture.profileId}&limit=2`)
        .set(root)
        .expect(200);
      expect(first.body.events.map((e: { action: string }) => e.action)).toEqual([
        'profile.erase',
        'profile.export',
      ]);
      const second = await t
        .api()
        .get(`/api/audit?profile=${fixture.profileId}&limit=2&cursor=${first.body.next}`)
        .set(root)
        .expect(200);
      expect(second.body.events.map((e: { action: string }) => e.action)).toEqual([
        'trait.put',
        'memory.create',
      ]);

      // the application's own admin key sees its events only
      const own = await t.api().get('/api/audit?application=default').set(auth).expect(404);
      expectEnvelope(own.body, 'application_not_found');
      const mine = await t.api().get('/api/audit').set(auth).expect(200);
      expect(mine.body.events.length).toBeGreaterThan(0);
    });

    it('records failed authentication without the key', async () => {
      const secret = `pms_abcdef012345_${'y'.repeat(43)}`;
      await t.api().get('/api/profiles').set('Authorization', `Bearer ${secret}`).expect(401);
      await t.drain();
      const res = await t.api().get('/api/audit?action=auth.failed').set(root).expect(200);
      expect(res.body.events[0]).toMatchObject({
        action: 'auth.failed',
        outcome: 'denied',
        target: { keyPrefix: 'abcdef012345' },
      });
      expect(JSON.stringify(res.body)).not.toContain('y'.repeat(43));
    });

    it('writes no audit event for a change that did not happen', async () => {
      const before = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM audit_events WHERE action = 'memory.delete'`,
      );
      const fixture = await makeFixture('default');
      await t
        .api()
        .delete(`/api/profiles/${fixture.profileId}/memories/${randomUUID()}`)
        .set(root)
        .expect(404);
      const after = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM audit_events WHERE action = 'memory.delete'`,
      );
      expect(after[0].n).toBe(before[0].n);
    });
  });
});

describe('Rate limits per key and per application', () => {
  const t = useTestApp({
    serviceKey: ROOT,
    env: { KEY_RATE_LIMIT_PER_MINUTE: '2', APPLICATION_RATE_LIMIT_PER_MINUTE: '3' },
  });
  const root = { Authorization: `Bearer ${ROOT}` };

  it('limits each key, then the application across its keys, and says which; the root key is not limited by them', async () => {
    await t.api().post('/api/applications').set(root).send({ name: 'limited' }).expect(201);
    const key = async () =>
      (
        await t
          .api()
          .post('/api/keys')
          .set(root)
          .send({ application: 'limited', scopes: ['read'], name: 'k' })
          .expect(201)
      ).body.secret as string;
    const first = await key();
    const second = await key();
    const get = (secret: string) => t.api().get('/api/profiles').set('Authorization', `Bearer ${secret}`);
    await get(first).expect(200);
    await get(first).expect(200);
    const perKey = await get(first).expect(429);
    expectEnvelope(perKey.body, 'key_rate_limit_exceeded');
    expect(perKey.headers['retry-after']).toMatch(/^\d+$/);
    await get(second).expect(200);
    const perApplication = await get(second).expect(429);
    expectEnvelope(perApplication.body, 'application_rate_limit_exceeded');
    for (let i = 0; i < 5; i++) await t.api().get('/api/profiles').set(root).expect(200);
  });
});

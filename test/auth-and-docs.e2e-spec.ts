import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectEnvelope } from './support/factories';
import { servedRoutes } from './support/served-routes';
import { useTestApp } from './support/test-app';

const API_KEY = 'test-key-0123456789-abcdefghij';

interface Operation {
  operationId: string;
  tags?: string[];
  'x-access'?: string;
  security?: Array<Record<string, string[]>>;
  responses: Record<string, { content?: unknown }>;
}

describe('API key and documentation', () => {
  const t = useTestApp({ serviceKey: API_KEY });

  const auth = { Authorization: `Bearer ${API_KEY}` };

  it('answers 401 missing_api_key without an Authorization header', async () => {
    const res = await t.api().get('/api/profiles').expect(401);
    expect(expectEnvelope(res.body, 'missing_api_key').type).toBe('authentication_error');
  });

  it.each([
    ['a Basic header', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['Bearer with no token', 'Bearer '],
    ['a bare token', API_KEY],
  ])('answers 401 missing_api_key for %s', async (_label, header) => {
    const res = await t.api().get('/api/profiles').set('Authorization', header).expect(401);
    expectEnvelope(res.body, 'missing_api_key');
  });

  it.each([
    ['a wrong key', 'Bearer wrong'],
    ['a prefix of the key', `Bearer ${API_KEY.slice(0, -1)}`],
    ['the key with a suffix', `Bearer ${API_KEY}x`],
    ['a very long key', `Bearer ${'k'.repeat(10_000)}`],
  ])('answers 401 invalid_api_key for %s', async (_label, header) => {
    const res = await t.api().get('/api/profiles').set('Authorization', header).expect(401);
    const error = expectEnvelope(res.body, 'invalid_api_key');
    expect(JSON.stringify(res.body)).not.toContain(API_KEY);
    expect(error.type).toBe('authentication_error');
  });

  it('lets the right key through, with the scheme in any case', async () => {
    await t.api().get('/api/profiles').set(auth).expect(200);
    await t.api().get('/api/profiles').set('Authorization', `bearer ${API_KEY}`).expect(200);
  });

  it('does not write anything for a rejected request', async () => {
    await t.api().post('/api/profiles').send({ externalId: 'sneaky' }).expect(401);
    const res = await t.api().get('/api/profiles?search=sneaky').set(auth).expect(200);
    expect(res.body.total).toBe(0);
  });

  it('keeps /health, /ready and the docs public, and the root leads to the console', async () => {
    await t.api().get('/').expect(302).expect('Location', '/admin/');
    await t.api().get('/health').expect(200);
    await t.api().get('/ready').expect(200);
    await t.api().get('/docs-json').expect(200);
    const ui = await t.api().get('/docs').redirects(1).expect(200);
    expect(ui.text).toContain('swagger');
  });

  describe('the OpenAPI document', () => {
    let doc: {
      info: { title: string; version: string };
      paths: Record<string, Record<string, Operation>>;
      tags: { name: string; description?: string }[];
      components: { schemas: Record<string, unknown>; securitySchemes: Record<string, object> };
    };

    beforeAll(async () => {
      doc = (await t.api().get('/docs-json').expect(200)).body;
    });

    it('has the package version, a plain bearer key (not a JWT) and a description for every tag', () => {
      const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
        version: string;
      };
      expect(doc.info.version).toBe(version);
      expect(doc.components.securitySchemes).toEqual({
        bearer: { type: 'http', scheme: 'bearer', description: expect.stringContaining('SERVICE_API_KEY') },
      });
      const used = new Set(
        Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags ?? [])),
      );
      const described = new Map(doc.tags.map((tag) => [tag.name, tag.description]));
      for (const tag of used)
        expect({ tag, description: described.get(tag) }).toEqual({ tag, description: expect.any(String) });
    });

    it('documents every route the server has, and nothing it does not', () => {
      const served = servedRoutes(t).sort();
      const documented = Object.entries(doc.paths)
        .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
        .sort();
      expect(documented).toEqual(served);
      expect(served.length).toBeGreaterThanOrEqual(14);
    });

    it('gives every operation a method-named id, a success response with a schema, and its errors', () => {
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const where = `${method.toUpperCase()} ${path}`;
          expect({ where, id: typeof op.operationId }).toEqual({ where, id: 'string' });
          const success = Object.entries(op.responses).filter(([status]) => status.startsWith('2'));
          // a method that a protocol requires to be refused (GET /mcp) documents its 405 instead
          const refusesMethod = '405' in op.responses;
          expect({ where, hasSuccess: success.length > 0 || refusesMethod }).toEqual({
            where,
            hasSuccess: true,
          });
          if (path.startsWith('/api/')) {
            expect({ where, schema: success.every(([, r]) => r.content !== undefined) }).toEqual({
              where,
              schema: true,
            });
            expect({ where, has401: '401' in op.responses }).toEqual({ where, has401: true });
          }
        }
      }
    });

    it('declares the access of every operation, and the server enforces exactly that', async () => {
      const [profile] = await t.dataSource.query(
        `INSERT INTO profiles (external_id) VALUES ('docs-walk') RETURNING id`,
      );
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const where = `${method.toUpperCase()} ${path}`;
          const access = op['x-access'];
          expect({ where, access }).toEqual({ where, access: expect.stringMatching(/^(public|api-key)$/) });
          if (access === 'api-key')
            expect({ where, security: op.security }).toEqual({ where, security: [{ bearer: [] }] });

          const concrete = path
            .replace('{id}', profile.id)
            .replace('{key}', 'name')
            .replace('{memoryId}', profile.id);
          const res = await t.api()[method as 'get'](concrete).send({});
          if (access === 'public') expect({ where, status: res.status }).not.toEqual({ where, status: 401 });
          else expect({ where, code: res.body?.error?.code }).toEqual({ where, code: 'missing_api_key' });
        }
      }
    });

    it('describes request bodies from the DTOs, with their limits', () => {
      const memory = doc.components.schemas.CreateMemoryDto as {
        required: string[];
        properties: Record<string, object>;
      };
      expect(memory.required).toEqual(expect.arrayContaining(['content', 'type']));
      expect(memory.properties.importance).toMatchObject({ minimum: 0, maximum: 1 });
      expect(doc.components.schemas.ErrorResponseDto).toBeDefined();
    });
  });
});

import { expectEnvelope, makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';

/** What reaches the HTTP layer before any controller: routing, body parsing, sizes, media types. */
describe('HTTP edge: errors before the controllers', () => {
  const t = useTestApp({ env: { BODY_LIMIT: '2mb' } });
  let profileId: string;

  beforeAll(async () => {
    profileId = (await makeProfile(t)).id;
  });

  it.each([
    ['GET', '/nope'],
    ['GET', '/api/profiles/x/unknown'],
    ['POST', '/health'],
    ['PUT', '/api/profiles'],
    ['GET', '/v2/chat/completions'],
  ])('answers %s %s with 404 not_found in the envelope', async (method, path) => {
    const res = await t.api()[method.toLowerCase() as 'get'](path).expect(404);
    expect(expectEnvelope(res.body, 'not_found').type).toBe('not_found');
  });

  it.each([
    ['truncated JSON', '{"externalId": "a"'],
    ['a trailing comma', '{"externalId": "a",}'],
    ['single quotes', "{'externalId': 'a'}"],
    ['plain text', 'hello'],
  ])('answers malformed JSON (%s) with 400 invalid_json', async (_label, raw) => {
    const res = await t
      .api()
      .post('/api/profiles')
      .set('content-type', 'application/json')
      .send(raw)
      .expect(400);
    expectEnvelope(res.body, 'invalid_json');
  });

  it.each([
    ['__proto__ in a body', '/api/profiles', '{"externalId":"pp1","__proto__":{"admin":true}}', '__proto__'],
    ['constructor in a body', '/api/profiles', '{"externalId":"pp2","constructor":{"x":1}}', 'constructor'],
    [
      '__proto__ nested in a free-form object',
      'ingest',
      '{"data":"I like tea.","metadata":{"source":{"__proto__":{"admin":true}}}}',
      'metadata.source.__proto__',
    ],
    [
      'constructor nested in a free-form object',
      'ingest',
      '{"data":"x","metadata":{"constructor":1}}',
      'metadata.constructor',
    ],
  ])('refuses %s as an unknown field', async (_label, path, raw, param) => {
    const url = path === 'ingest' ? `/api/profiles/${profileId}/ingest` : path;
    const res = await t.api().post(url).set('content-type', 'application/json').send(raw).expect(400);
    expect(expectEnvelope(res.body, 'unknown_field').param).toBe(param);
    const listed = await t.api().get('/api/profiles?limit=100').expect(200);
    expect(JSON.stringify(listed.body)).not.toMatch(/"pp[12]"/);
  });

  it('refuses __proto__ and constructor in a query string as unknown fields', async () => {
    for (const key of ['__proto__', 'constructor']) {
      const res = await t.api().get(`/api/profiles?${key}=1`).expect(400);
      expect(expectEnvelope(res.body, 'unknown_field').param).toBe(key);
    }
  });

  it.each([
    ['an array', '[{"externalId": "a"}]'],
    ['a string', '"a"'],
    ['null', 'null'],
    ['a number', '42'],
  ])('answers a JSON body that is %s with 400 invalid_json', async (_label, raw) => {
    const res = await t
      .api()
      .post('/api/profiles')
      .set('content-type', 'application/json')
      .send(raw)
      .expect(400);
    expectEnvelope(res.body, 'invalid_json');
  });

  it('answers deeply nested JSON with 400 invalid_json, not a crash', async () => {
    const deep = '{"value":' + '['.repeat(5000) + ']'.repeat(5000) + '}';
    const res = await t
      .api()
      .put(`/api/profiles/${profileId}/traits/deep`)
      .set('content-type', 'application/json')
      .send(deep)
      .expect(400);
    expectEnvelope(res.body, 'invalid_json');
    const shallowEnough = { value: JSON.parse('['.repeat(10) + '1' + ']'.repeat(10)) as unknown };
    await t.api().put(`/api/profiles/${profileId}/traits/nested`).send(shallowEnough).expect(200);
  });

  it('answers a body over BODY_LIMIT with 413 payload_too_large', async () => {
    const res = await t
      .api()
      .post(`/api/profiles/${profileId}/memories`)
      .send({ content: 'x'.repeat(2 * 1024 * 1024 + 10), type: 'fact' })
      .expect(413);
    const error = expectEnvelope(res.body, 'payload_too_large');
    expect(error.type).toBe('invalid_request_error');
  });

  it('accepts a body just under the limit (and validates it normally)', async () => {
    const res = await t
      .api()
      .post(`/api/profiles/${profileId}/memories`)
      .send({ content: 'x'.repeat(1024 * 1024), type: 'fact' })
      .expect(400);
    expectEnvelope(res.body, 'invalid_content');
  });

  it('answers a non-JSON body with 415 unsupported_media_type', async () => {
    const res = await t
      .api()
      .post('/api/profiles')
      .set('content-type', 'text/plain')
      .send('externalId=alice')
      .expect(415);
    expectEnvelope(res.body, 'unsupported_media_type');
    const form = await t.api().post('/api/profiles').type('form').send({ externalId: 'alice' }).expect(415);
    expectEnvelope(form.body, 'unsupported_media_type');
  });

  it('accepts application/json with a charset and vendor +json types', async () => {
    await t
      .api()
      .post('/api/profiles')
      .set('content-type', 'application/json; charset=utf-8')
      .send(JSON.stringify({ externalId: 'charset-user' }))
      .expect(201);
    await t
      .api()
      .post('/api/profiles')
      .set('content-type', 'application/vnd.api+json')
      .send(JSON.stringify({ externalId: 'vendor-user' }))
      .expect(201);
  });

  it('answers a request with no body as a validation error', async () => {
    const res = await t.api().post('/api/profiles').expect(400);
    expectEnvelope(res.body, 'invalid_external_id');
  });

  it('answers a malformed percent-encoding in the path with a 400 envelope', async () => {
    const res = await t.api().get('/api/profiles/%E0%A4%A');
    expect(res.status).toBe(400);
    expectEnvelope(res.body, 'invalid_request');
  });

  it('stores unicode, emoji, right-to-left text and SQL-looking strings verbatim', async () => {
    const samples = [
      'Zoë 👩🏽‍💻 naïve café',
      'مرحبا بالعالم',
      "Robert'); DROP TABLE memories;--",
      '$1 $$ \\x00 %s {{value}} <script>alert(1)</script>',
      '\u{1F600}'.repeat(500),
    ];
    for (const content of samples) {
      const created = await t
        .api()
        .post(`/api/profiles/${profileId}/memories`)
        .send({ content, type: 'fact' })
        .expect(201);
      expect(created.body.memory.content).toBe(content);
    }
    const externalId = "user 👤 «ünïcödé» ' OR 1=1";
    const profile = await t.api().post('/api/profiles').send({ externalId }).expect(201);
    const fetched = await t
      .api()
      .get(`/api/profiles/${encodeURIComponent(externalId)}`)
      .expect(200);
    expect(fetched.body.profile.id).toBe(profile.body.profile.id);
    const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM memories`);
    expect(n).toBeGreaterThanOrEqual(samples.length);
  });

  it('never answers 5xx or a stack trace to a barrage of wrong types on every write route', async () => {
    const wrongValues: unknown[] = [
      null,
      true,
      0,
      -1,
      1e308,
      '',
      ' ',
      'x'.repeat(50_000),
      [],
      [1, 2],
      {},
      { $gt: '' },
    ];
    const routes: Array<[string, string, (v: unknown) => object]> = [
      ['post', '/api/profiles', (v) => ({ externalId: v })],
      ['patch', `/api/profiles/${profileId}`, (v) => ({ summary: v })],
      ['put', `/api/profiles/${profileId}/traits/name`, (v) => ({ value: v, confidence: v })],
      ['post', `/api/profiles/${profileId}/memories`, (v) => ({ content: v, type: v, importance: v })],
    ];
    for (const [method, path, body] of routes) {
      for (const value of wrongValues) {
        const res = await t.api()[method as 'post'](path).send(body(value));
        expect(res.status).toBeLessThan(500);
        expect(JSON.stringify(res.body)).not.toMatch(/at \w+ \(|node_modules|QueryFailedError|violates/);
        if (res.status >= 400) expect(res.body.error.code).toEqual(expect.any(String));
      }
    }
  });
});

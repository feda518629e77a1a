import { ConfigError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('has working defaults for an empty environment: embedded database, no key, OpenAI upstream', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: null,
      serviceApiKey: null,
      bodyLimitBytes: 10 * 1024 * 1024,
      extractor: 'auto',
      rateLimitPerMinute: 600,
      ingestRateLimitPerMinute: 60,
      upstream: { provider: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: null, timeoutMs: 60_000 },
      llm: { baseUrl: 'https://api.openai.com/v1', apiKey: null, model: 'gpt-4o-mini' },
      migrationLockTimeoutMs: 300_000,
    });
    expect(config.dataDir).toMatch(/\/data$/);
  });

  it('lets the LLM settings fall back to the upstream ones', () => {
    const config = loadConfig({ UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1/', UPSTREAM_API_KEY: 'sk-up' });
    expect(config.upstream.baseUrl).toBe('http://127.0.0.1:9/v1');
    expect(config.llm).toMatchObject({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-up' });
    const own = loadConfig({
      UPSTREAM_API_KEY: 'sk-up',
      LLM_API_KEY: 'sk-llm',
      LLM_BASE_URL: 'http://llm:1/v1',
    });
    expect(own.llm).toMatchObject({ baseUrl: 'http://llm:1/v1', apiKey: 'sk-llm' });
  });

  it('turns semantic ranking on only with EMBEDDINGS_MODEL, with the upstream as default endpoint', () => {
    expect(loadConfig({ EMBEDDINGS_BASE_URL: 'http://e:1/v1' }).embeddings).toBeNull();
    expect(loadConfig({}).ranking.semanticShare).toBe(0.5);
    const config = loadConfig({
      UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1',
      UPSTREAM_API_KEY: 'sk-up',
      EMBEDDINGS_MODEL: 'text-embedding-3-small',
    });
    expect(config.embeddings).toEqual({
      model: 'text-embedding-3-small',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-up',
      dimensions: null,
      timeoutMs: 2_000,
    });
    const own = loadConfig({
      EMBEDDINGS_MODEL: 'm',
      EMBEDDINGS_BASE_URL: 'http://e:1/v1/',
      EMBEDDINGS_API_KEY: 'sk-e',
      EMBEDDINGS_DIMENSIONS: '512',
      EMBEDDINGS_TIMEOUT_MS: '300',
      RANK_SEMANTIC_SHARE: '0.7',
    });
    expect(own.embeddings).toEqual({
      model: 'm',
      baseUrl: 'http://e:1/v1',
      apiKey: 'sk-e',
      dimensions: 512,
      timeoutMs: 300,
    });
    expect(own.ranking.semanticShare).toBe(0.7);
  });

  it.each([
    ['EMBEDDINGS_DIMENSIONS', '0'],
    ['EMBEDDINGS_DIMENSIONS', '16001'],
    ['EMBEDDINGS_DIMENSIONS', 'many'],
    ['EMBEDDINGS_TIMEOUT_MS', '0'],
    ['EMBEDDINGS_BASE_URL', 'file:///etc/passwd'],
    ['RANK_SEMANTIC_SHARE', '1.5'],
  ])('refuses %s=%s, naming the variable', (variable, value) => {
    expect(() => loadConfig({ EMBEDDINGS_MODEL: 'm', [variable]: value })).toThrow(
      new RegExp(`Invalid configuration: ${variable}`),
    );
  });

  it('reads sizes, lists and case-insensitive choices', () => {
    const config = loadConfig({
      BODY_LIMIT: '2048KB',
      CORS_ORIGINS: ' https://a.example , ,https://b.example',
      EXTRACTOR: 'Heuristic',
    });
    expect(config.bodyLimitBytes).toBe(2 * 1024 * 1024);
    expect(config.corsOrigins).toEqual(['https://a.example', 'https://b.example']);
    expect(config.extractor).toBe('heuristic');
  });

  it('reads the operations settings: proxies to trust, Redis, shutdown grace, pretty logs', () => {
    expect(loadConfig({})).toMatchObject({
      trustProxy: false,
      redisUrl: null,
      shutdownGraceMs: 25_000,
      logPretty: false,
    });
    expect(
      loadConfig({
        TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8',
        REDIS_URL: 'redis://:secret@cache:6379/2',
        SHUTDOWN_GRACE_MS: '5000',
        LOG_PRETTY: 'yes',
      }),
    ).toMatchObject({
      trustProxy: 'loopback,10.0.0.0/8,fd00::/8',
      redisUrl: 'redis://:secret@cache:6379/2',
      shutdownGraceMs: 5000,
      logPretty: true,
    });
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ SERVICE_API_KEY: '  ', DATABASE_URL: '' })).toMatchObject({
      serviceApiKey: null,
      databaseUrl: null,
    });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['UPSTREAM_TIMEOUT_MS', '1.5'],
    ['UPSTREAM_BASE_URL', 'not a url'],
    ['UPSTREAM_BASE_URL', 'file:///etc/passwd'],
    ['UPSTREAM_BASE_URL', 'https://api.example/v1?key=1'],
    ['UPSTREAM_PROVIDER', 'gemini'],
    ['DATABASE_URL', 'mysql://root@localhost/db'],
    ['BODY_LIMIT', '10gb'],
    ['BODY_LIMIT', '100kb'],
    ['LOG_LEVEL', 'loud'],
    ['LOG_PRETTY', 'maybe'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', 'loopback, not-an-address'],
    ['REDIS_URL', 'http://cache:6379'],
    ['SHUTDOWN_GRACE_MS', '-5'],
    ['MIGRATION_LOCK_TIMEOUT_MS', '0'],
  ])('rejects %s=%s with an error naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(
      new RegExp(`^Invalid configuration: ${variable} `),
    );
  });

  it('reads the context statement pool size, 8 by default, within 1 to 200', () => {
    expect(loadConfig({}).databaseContextPoolSize).toBe(8);
    expect(loadConfig({ DATABASE_CONTEXT_POOL_SIZE: '3' }).databaseContextPoolSize).toBe(3);
    expect(() => loadConfig({ DATABASE_CONTEXT_POOL_SIZE: '0' })).toThrow(/DATABASE_CONTEXT_POOL_SIZE/);
    expect(() => loadConfig({ DATABASE_CONTEXT_POOL_SIZE: '201' })).toThrow(/DATABASE_CONTEXT_POOL_SIZE/);
  });

  it('reads how long a held context is trusted, 5 s by default, 0 for never', () => {
    expect(loadConfig({}).context.heldTrustMs).toBe(5_000);
    expect(loadConfig({ CONTEXT_HELD_TRUST_MS: '0' }).context.heldTrustMs).toBe(0);
    expect(() => loadConfig({ CONTEXT_HELD_TRUST_MS: '-1' })).toThrow(/CONTEXT_HELD_TRUST_MS/);
    expect(() => loadConfig({ CONTEXT_HELD_TRUST_MS: 'soon' })).toThrow(/CONTEXT_HELD_TRUST_MS/);
  });

  it('refuses extraction workers as many as the server pool has connections, naming both variables', () => {
    const server = { DATABASE_URL: 'postgres://db/pms' };
    expect(() => loadConfig({ ...server, DATABASE_POOL_SIZE: '2', EXTRACTION_CONCURRENCY: '2' })).toThrow(
      /EXTRACTION_CONCURRENCY \(2\) must be lower than DATABASE_POOL_SIZE \(2\)/,
    );
    expect(() =>
      loadConfig({ ...server, DATABASE_POOL_SIZE: '3', EXTRACTION_CONCURRENCY: '2' }),
    ).not.toThrow();
    // the embedded database holds no connection for extraction: its one connection is shared
    expect(() => loadConfig({ DATABASE_POOL_SIZE: '1', EXTRACTION_CONCURRENCY: '4' })).not.toThrow();
  });
});

import { loadConfig } from '../config/app-config';
import { describeDatabase, describeModels, exposureWarning, listeningLine } from './startup-report';

const address = (host: string, port = 3000) => ({
  address: host,
  port,
  family: host.includes(':') ? 'IPv6' : 'IPv4',
});

describe('the start-up lines', () => {
  it('names the database server and its database, never the user or the password', () => {
    const line = describeDatabase(
      loadConfig({ DATABASE_URL: 'postgres://app:s%40cret@db.internal/profile%20memory' }),
    );
    expect(line).toBe('database: PostgreSQL server db.internal:5432, database profile memory');
  });

  it('names the embedded database by its directory, relative to the working directory when inside it', () => {
    expect(describeDatabase(loadConfig({ DATA_DIR: './data' }))).toBe(
      'database: embedded PostgreSQL (PGlite) in ./data',
    );
    expect(describeDatabase(loadConfig({ DATA_DIR: '/var/lib/pms' }))).toBe(
      'database: embedded PostgreSQL (PGlite) in /var/lib/pms',
    );
    expect(describeDatabase(loadConfig({ DATA_DIR: 'memory://' }))).toMatch(/in memory: nothing is kept/);
  });

  it('says which model learning calls, and where, when an LLM key is set', () => {
    expect(describeModels(loadConfig({ UPSTREAM_API_KEY: 'sk-x' }))).toBe(
      'upstream: openai API at api.openai.com; extractor: llm, each conversation turn and ingested text ' +
        "is sent to gpt-4o-mini at api.openai.com to learn from it; when the LLM's last try on a turn " +
        'fails, the rules learn from it instead; GET /api/profiles/{id} shows its learning state',
    );
    expect(
      describeModels(loadConfig({ UPSTREAM_API_KEY: 'sk-x', EXTRACTION_RULES_FALLBACK: 'false' })),
    ).toMatch(/the turn is given up \(EXTRACTION_RULES_FALLBACK=false\); GET \/api\/profiles\/\{id\} shows/);
    expect(
      describeModels(
        loadConfig({ LLM_BASE_URL: 'http://localhost:11434/v1', LLM_API_KEY: 'x', LLM_MODEL: 'llama3.2' }),
      ),
    ).toMatch(
      /^upstream: openai API at api\.openai\.com \(no UPSTREAM_API_KEY: .*llama3\.2 at localhost:11434/,
    );
    expect(describeModels(loadConfig({ UPSTREAM_API_KEY: 'sk-x', EXTRACTOR: 'heuristic' }))).toMatch(
      /extractor: heuristic \(rules, no LLM calls\)$/,
    );
    expect(describeModels(loadConfig({}))).toMatch(/extractor: heuristic \(rules, no LLM calls: no LLM key;/);
  });

  it.each([
    ['0.0.0.0', true],
    ['::', true],
    ['192.168.1.20', true],
    ['127.0.0.1', false],
    ['127.0.1.1', false],
    ['::1', false],
    ['::ffff:127.0.0.1', false],
  ])('warns about %s without a key: %s', (host, warned) => {
    const warning = exposureWarning(loadConfig({}), address(host));
    expect(warning !== null).toBe(warned);
    if (warned) expect(warning).toContain(`listens on ${host}: anyone who can reach port 3000`);
    expect(exposureWarning(loadConfig({ SERVICE_API_KEY: 'k' }), address(host))).toBeNull();
  });

  it('gives the address as bound, IPv6 in brackets', () => {
    expect(listeningLine(address('0.0.0.0', 8080))).toBe('listening on http://0.0.0.0:8080 (docs at /docs)');
    expect(listeningLine(address('::', 8080))).toBe('listening on http://[::]:8080 (docs at /docs)');
  });
});

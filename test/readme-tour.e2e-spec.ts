// @database postgres
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChildService } from './support/child-service';
import { FakeOpenAI, startFakeOpenAI } from './support/fake-openai-upstream';
import { withFreshDatabase } from './support/fresh-database';

const README = join(__dirname, '..', 'README.md');
/** Marks a bash block of the README that this test runs; an HTML comment, invisible once rendered. */
const MARKER = '<!-- tour -->';
const BASE_URL_LINE = 'PMS=http://localhost:3000';
/** `# => {...}`: the answer of the command above contains this JSON. */
const EXPECTATION = /^# => (.+)$/;

interface Block {
  line: number;
  code: string;
}

/** The marked bash blocks, in README order. */
export function tourBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== MARKER) continue;
    let start = i + 1;
    while (lines[start].trim() === '') start++;
    if (lines[start] !== '```bash')
      throw new Error(`README.md:${i + 1}: ${MARKER} is not followed by a bash block`);
    const end = lines.indexOf('```', start + 1);
    blocks.push({ line: start + 1, code: lines.slice(start + 1, end).join('\n') });
  }
  return blocks;
}

/**
 * The script the test runs: the blocks in order in one shell, curl failing on HTTP errors and keeping
 * each answer for the `# =>` checks, the base URL pointed at the service under test.
 */
function tourScript(blocks: Block[], baseUrl: string): string {
  const preamble = String.raw`set -euo pipefail
TOUR_LAST=$(mktemp)
trap 'rm -f "$TOUR_LAST"' EXIT
curl() { command curl --fail-with-body "$@" | tee "$TOUR_LAST"; }
tour_expect() { node -e '
const want = JSON.parse(process.argv[1]);
const got = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
const contains = (a, b) => typeof b !== "object" || b === null ? a === b
  : typeof a === "object" && a !== null && Object.keys(b).every((k) => contains(a[k], b[k]));
if (!contains(got, want)) { console.error("expected " + JSON.stringify(want) + "\ngot " + JSON.stringify(got)); process.exit(1); }' "$1" "$TOUR_LAST"; }
`;
  const body = blocks.map(({ line, code }) => {
    const lines = code.split('\n').map((text) => {
      if (text === BASE_URL_LINE) return `PMS=${baseUrl}`;
      const expectation = EXPECTATION.exec(text);
      return expectation ? `tour_expect '${expectation[1]}'` : text;
    });
    return `echo "== README.md:${line}" >&2\n${lines.join('\n')}`;
  });
  return `${preamble}\n${body.join('\n')}\n`;
}

function runBash(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The README's tour, run top to bottom against the built service, so that it cannot drift. */
describe('The README tour', () => {
  let fake: FakeOpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });

  afterAll(async () => {
    await fake.close();
  });

  it('finds the marked blocks, the first one setting the base URL', () => {
    const blocks = tourBlocks(readFileSync(README, 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    expect(blocks[0].code.split('\n')[0]).toBe(BASE_URL_LINE);
    expect(blocks.some(({ code }) => EXPECTATION.test(code.split('\n').pop() ?? ''))).toBe(true);
  });

  it('runs top to bottom as written', async () => {
    await withFreshDatabase(async (databaseUrl) => {
      // As `npm start` with no LLM key (learning by rules), with an upstream for the chat blocks.
      const service = await ChildService.start({
        DATABASE_URL: databaseUrl,
        UPSTREAM_BASE_URL: fake.url,
        UPSTREAM_API_KEY: 'sk-tour',
        EXTRACTOR: 'heuristic',
      });
      try {
        await service.ready();
        const blocks = tourBlocks(readFileSync(README, 'utf8'));
        const { code, stdout, stderr } = await runBash(tourScript(blocks, service.url));
        expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
        expect(stdout).toContain('"deleted"');
        // the chat blocks reached the upstream: one answer, then one stream
        const chats = fake.requests.filter((request) => request.path.endsWith('/chat/completions'));
        expect(chats.map((request) => request.body.stream === true)).toEqual([false, true]);
      } finally {
        await service.stop();
      }
    });
  });
});

import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../bench/free-port';

export const MAIN_JS = join(__dirname, '..', '..', 'dist', 'src', 'main.js');

// Every test file that starts the built service gets this timeout per test and hook: a boot takes
// seconds on a quiet machine (a new embedded database about five) and well over a minute on a busy one.
jest.setTimeout(300_000);

/** One JSON line of the service's log. */
export interface LogLine {
  level: string;
  msg: string;
  context?: string;
  [field: string]: unknown;
}

/** Children still running; killed when the test process exits, so a failed test leaves none behind. */
const running = new Set<ChildService>();
let reaperInstalled = false;

function killLeftovers(): void {
  for (const service of running) service.process.kill('SIGKILL');
}

/** The built service (`npm run build`) as a real child process. */
export class ChildService {
  /** stdout and stderr, in the order they arrived. */
  readonly output: string[] = [];
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly process: ChildProcess,
    readonly url: string,
    readonly port: number,
  ) {
    const collect = (into: string[]) => (chunk: Buffer) => {
      into.push(chunk.toString());
      this.output.push(chunk.toString());
    };
    process.stdout?.on('data', collect(this.stdout));
    process.stderr?.on('data', collect(this.stderr));
    running.add(this);
    this.exited = new Promise((resolve) =>
      process.once('exit', (code, signal) => {
        running.delete(this);
        resolve({ code, signal });
      }),
    );
  }

  /**
   * Starts `node dist/src/main.js` on a free port, listening on 127.0.0.1 unless `env` sets HOST.
   * `command` runs it through another program (e.g. `['unshare', '--pid', '--fork']`); `nodeArgs` go
   * to node before the script (e.g. `['-r', preload]`).
   */
  static async start(
    env: Record<string, string | undefined>,
    { command = [] as string[], nodeArgs = [] as string[] } = {},
  ): Promise<ChildService> {
    if (!existsSync(MAIN_JS))
      throw new Error(`${MAIN_JS} is missing: run "npm run build" before the end-to-end tests`);
    const port = await freePort();
    const childEnv: Record<string, string> = {};
    for (const [key, value] of Object.entries({
      ...process.env,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      ...env,
      PORT: String(port),
    })) {
      if (value !== undefined && key !== 'NODE_OPTIONS') childEnv[key] = value;
    }
    const [program, ...args] = [...command, process.execPath, ...nodeArgs, MAIN_JS];
    if (!reaperInstalled) {
      reaperInstalled = true;
      globalThis.process.once('exit', killLeftovers);
    }
    const child = spawn(program, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    return new ChildService(child, `http://127.0.0.1:${port}`, port);
  }

  /** The JSON lines written to stdout so far. */
  logLines(): LogLine[] {
    return this.stdout
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);
  }

  /**
   * Resolves when /health answers; rejects if the process exits first. The default wait is long: a new
   * embedded database takes 5 s on a quiet machine and over 30 s on a busy one.
   */
  async ready(timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    void this.exited.then((status) => (exit = status));
    while (Date.now() < deadline) {
      if (exit !== null) {
        throw new Error(
          `service exited (${JSON.stringify(exit)}) before it was ready:\n${this.output.join('')}`,
        );
      }
      try {
        const res = await fetch(`${this.url}/health`);
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`service not ready after ${timeoutMs} ms:\n${this.output.join('')}`);
  }

  /**
   * Stops every child still running: after each test of a file whose tests start their own, so that a
   * test that failed half-way leaves no service holding a port or DATA_DIR for the next one.
   */
  static async stopAll(): Promise<void> {
    await Promise.all([...running].map((service) => service.stop()));
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGTERM');
    return this.exited;
  }
}

/**
 * Empties the tables of the PostgreSQL database the child services of this file use (when DATABASE_URL
 * is set): a file's worker database keeps what earlier files left, such as turns still waiting for
 * extraction, which the gauges a test waits on would count. A database no file has migrated yet (this
 * file is its worker's first) has nothing to empty: the child service migrates it.
 */
export async function emptyServerDatabase(): Promise<void> {
  if (!process.env.DATABASE_URL) return;
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ migrated: boolean }>(
      "SELECT to_regclass('job_leases') IS NOT NULL AS migrated",
    );
    if (!rows[0].migrated) return;
    await client.query(
      'TRUNCATE profiles, traits, memories, memory_embeddings, messages, job_leases, api_keys, audit_events CASCADE',
    );
    await client.query("DELETE FROM applications WHERE name <> 'default'");
  } finally {
    await client.end();
  }
}

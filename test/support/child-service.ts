import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const MAIN_JS = join(__dirname, '..', '..', 'dist', 'src', 'main.js');

/** The built service (`npm run build`) as a real child process. */
export class ChildService {
  readonly output: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly process: ChildProcess,
    readonly url: string,
  ) {
    process.stdout?.on('data', (chunk: Buffer) => this.output.push(chunk.toString()));
    process.stderr?.on('data', (chunk: Buffer) => this.output.push(chunk.toString()));
    this.exited = new Promise((resolve) => process.once('exit', (code, signal) => resolve({ code, signal })));
  }

  static async start(env: Record<string, string | undefined>): Promise<ChildService> {
    if (!existsSync(MAIN_JS))
      throw new Error(`${MAIN_JS} is missing: run "npm run build" before the end-to-end tests`);
    const port = await freePort();
    const childEnv: Record<string, string> = {};
    for (const [key, value] of Object.entries({
      ...process.env,
      LOG_LEVEL: 'warn',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    })) {
      if (value !== undefined && key !== 'NODE_OPTIONS') childEnv[key] = value;
    }
    const child = spawn(process.execPath, [MAIN_JS], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    return new ChildService(child, `http://127.0.0.1:${port}`);
  }

  /** Resolves when /health answers; rejects if the process exits first. */
  async ready(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    while (Date.now() < deadline) {
      if (exited) throw new Error(`service exited before it was ready:\n${this.output.join('')}`);
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

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGTERM');
    return this.exited;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './free-port';

/** This build's service. */
export const THIS_BUILD_MAIN = join(__dirname, '..', 'src', 'main.js');

/** The built service (dist/src/main.js) in its own process, so that load and service do not share a thread. */
export class ServiceProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly output: string[],
  ) {}

  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * `nodeArgs` e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] to profile the service. `stdoutFile` takes
   * its log lines (as a log collector would), so that a service logging every request does not load the
   * benchmark's own process; without it they are kept in `output`. `main` is the build to run: by
   * default BENCH_SERVICE_MAIN (another build, e.g. of an earlier commit, for a before/after
   * comparison), else this one. `launcher` is a command that runs node in the same process (valgrind
   * and its options), and `readyWithinMs` how long the service may take to start.
   */
  static async start(
    env: Record<string, string | undefined>,
    nodeArgs: string[] = [],
    {
      stdoutFile,
      main = process.env.BENCH_SERVICE_MAIN ?? THIS_BUILD_MAIN,
      launcher = [],
      readyWithinMs = 60_000,
    }: { stdoutFile?: string; main?: string; launcher?: string[]; readyWithinMs?: number } = {},
  ): Promise<ServiceProcess> {
    const port = await freePort();
    const output: string[] = [];
    const childEnv: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...process.env, LOG_LEVEL: 'warn', ...env })) {
      if (value !== undefined) childEnv[key] = value;
    }
    childEnv.PORT = String(port);
    childEnv.HOST = '127.0.0.1';
    const stdout = stdoutFile === undefined ? 'pipe' : openSync(stdoutFile, 'w');
    const command = [...launcher, process.execPath, ...productionNodeFlags(), ...nodeArgs, main];
    const child = spawn(command[0], command.slice(1), {
      env: childEnv,
      stdio: ['ignore', stdout, 'pipe'],
    });
    if (typeof stdout === 'number') closeSync(stdout);
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const service = new ServiceProcess(child, `http://127.0.0.1:${port}`, output);
    await service.ready(readyWithinMs);
    return service;
  }

  private async ready(withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`service exited:\n${this.output.join('')}`);
      try {
        if ((await fetch(`${this.url}/health`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`service not ready:\n${this.output.join('')}`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}

/**
 * The node flags the service runs with in production, as `npm run start:prod` (and the Dockerfile)
 * gives them: the benchmarks run the service, and the floor relay beside it, the same way.
 */
export function productionNodeFlags(): string[] {
  const packageJson = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const command = /^node((?: --[^\s]+)*) dist\/src\/main\.js$/.exec(packageJson.scripts['start:prod']);
  if (!command) throw new Error('package.json start:prod is not `node [--flags] dist/src/main.js`');
  return command[1].split(' ').filter(Boolean);
}

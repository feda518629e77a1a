// @database embedded
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildService } from './support/child-service';

/**
 * How to run a process as PID 1 of a new PID namespace, as in a container: `unshare --pid --fork`
 * (root), or with a user namespace for an unprivileged user. `--kill-child` ends the service if
 * unshare dies, so a failed test leaves nothing running.
 */
function pidNamespaceCommand(): string[] {
  const candidates = [
    ['unshare', '--pid', '--fork', '--kill-child'],
    ['unshare', '--user', '--map-root-user', '--pid', '--fork', '--kill-child'],
  ];
  const tried: string[] = [];
  for (const command of candidates) {
    const probe = spawnSync(command[0], [...command.slice(1), process.execPath, '-p', 'process.pid'], {
      encoding: 'utf8',
    });
    if (probe.status === 0 && probe.stdout.trim() === '1') return command;
    tried.push(
      `${command.join(' ')}: ${(probe.error?.message ?? probe.stderr).trim() || `exit ${probe.status}`}`,
    );
  }
  throw new Error(`cannot start a process in its own PID namespace here:\n${tried.join('\n')}`);
}

/** The pids of a process's children (the service under unshare). */
function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
}

const createProfile = (service: ChildService, externalId: string) =>
  fetch(`${service.url}/api/profiles`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ externalId }),
  });

/** The embedded database's directory lock against real processes. */
describe('The DATA_DIR lock of the built service', () => {
  let dataDir: string;
  const env = () => ({ DATABASE_URL: undefined, DATA_DIR: dataDir });

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'pms-lock-e2e-'));
  });

  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('restarts after a SIGKILL when it runs as PID 1 of its namespace (node in a container)', async () => {
    const command = pidNamespaceCommand();
    const first = await ChildService.start(env(), { command });
    await first.ready();
    expect((await createProfile(first, 'survivor')).status).toBe(201);
    const lockFile = join(dataDir, 'service.lock');
    expect(readFileSync(lockFile, 'utf8').split('\n')[0]).toBe('1');

    const [service] = childrenOf(first.process.pid!);
    process.kill(service, 'SIGKILL');
    await first.exited;
    expect(existsSync(lockFile)).toBe(true); // a killed process leaves its lock: "in use by process 1"

    // The restarted service is PID 1 again: a lock naming our own pid is stale, not ours.
    const second = await ChildService.start(env(), { command });
    await second.ready();
    expect((await fetch(`${second.url}/api/profiles/survivor`)).status).toBe(200);
    const [restarted] = childrenOf(second.process.pid!);
    process.kill(restarted, 'SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(lockFile)).toBe(false);
  });

  it('lets exactly one of several services started at once on a new DATA_DIR take it', async () => {
    const services = await Promise.all([1, 2, 3, 4].map(() => ChildService.start(env())));
    const outcomes = await Promise.all(
      services.map((service) =>
        service.ready().then(
          () => 'running',
          () => 'refused',
        ),
      ),
    );
    expect([...outcomes].sort()).toEqual(['refused', 'refused', 'refused', 'running']);
    const running = services[outcomes.indexOf('running')];
    for (const service of services.filter((candidate) => candidate !== running)) {
      expect(await service.exited).toEqual({ code: 1, signal: null });
      expect(service.stderr.join('')).toBe(
        `DATA_DIR ${dataDir} is in use by process ${running.process.pid}; two processes on one directory would lose writes.\n`,
      );
    }
    expect((await createProfile(running, 'only-one')).status).toBe(201);
    await running.stop();
  });
});

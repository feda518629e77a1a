import { ChildService, emptyServerDatabase } from './support/child-service';
import { TcpGate } from './support/tcp-gate';
import { startTestApp, TestApp } from './support/test-app';

const REDIS = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The rate limits' Redis behind a loopback gate that can stop answering (it accepts and never
 * replies, as a paused Redis or a black-holed network does): requests pass within a bound, /ready says
 * Redis is degraded (not down), start-up does not wait for it.
 */
describe('A Redis that stops answering', () => {
  let gate: TcpGate;

  beforeEach(async () => {
    gate = await TcpGate.start(Number(REDIS.port || 6379), REDIS.hostname);
  });

  afterEach(async () => {
    await ChildService.stopAll();
    await gate.close();
  });

  describe('under requests', () => {
    let t: TestApp;

    beforeEach(async () => {
      t = await startTestApp({
        REDIS_URL: `redis://127.0.0.1:${gate.port}`,
        RATE_LIMIT_PER_MINUTE: '1000',
        REDIS_COMMAND_TIMEOUT_MS: '300',
      });
    });

    afterEach(async () => {
      await t.close();
    });

    const redisOnReady = async () => {
      const ready = await t.api().get('/ready').expect(200);
      return ready.body.details.redis as { status: string; degraded: boolean; problem?: string };
    };

    it('lets requests through within the command timeout, stops asking it, and says so on /ready', async () => {
      // start-up does not wait for Redis: it counts requests a moment later
      await eventually(async () => {
        const res = await t.api().get('/api/profiles').expect(200);
        return Number(res.headers['x-ratelimit-remaining']) < 1000;
      }, 10_000);
      expect(await redisOnReady()).toEqual({ status: 'up', degraded: false });

      gate.silence();
      // the first waits for the command timeout; the breaker spares the others any wait
      for (let i = 0; i < 10; i++) await t.api().get('/api/profiles').timeout(2_000).expect(200);
      await t.api().get('/health').timeout(1_000).expect(200);
      expect(await redisOnReady()).toMatchObject({
        status: 'up',
        degraded: true,
        problem: expect.any(String),
      });

      gate.open();
      // after the pause, a request asks Redis again and finds it answering
      await eventually(async () => {
        await t.api().get('/api/profiles').expect(200);
        return !(await redisOnReady()).degraded;
      }, 15_000);
    });
  });

  describe('at boot', () => {
    beforeEach(async () => {
      await emptyServerDatabase();
    });

    it('does not hold start-up, lets requests through and warns', async () => {
      gate.silence();
      const service = await ChildService.start({
        DATA_DIR: 'memory://',
        REDIS_URL: `redis://127.0.0.1:${gate.port}`,
        RATE_LIMIT_PER_MINUTE: '1000',
        LOG_LEVEL: 'warn',
      });
      await service.ready(180_000);
      const profiles = await fetch(`${service.url}/api/profiles`, { signal: AbortSignal.timeout(3_000) });
      expect(profiles.status).toBe(200);
      const warned = () =>
        service
          .logLines()
          .some((line) => line.level === 'warn' && line.context === 'RateLimit' && /Redis/.test(line.msg));
      await eventually(() => Promise.resolve(warned()), 10_000);
      const ready = await fetch(`${service.url}/ready`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { details: { redis: unknown } }).details.redis).toMatchObject({
        status: 'up',
        degraded: true,
      });
    });
  });
});

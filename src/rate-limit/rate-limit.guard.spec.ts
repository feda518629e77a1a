import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { ThrottlerOptions, ThrottlerStorageService } from '@nestjs/throttler';
import { ApiError } from '../common/api-error';
import { IngestRateLimit, NoRateLimit } from '../common/rate-limit.decorator';
import { RateLimitGuard } from './rate-limit.guard';

class Routes {
  chat(this: void): void {}
  @IngestRateLimit()
  ingest(this: void): void {}
  @NoRateLimit()
  health(this: void): void {}
}

/** A request from one client address, as Express hands it over, with a response that keeps headers. */
function requestOf(handler: () => void): { context: ExecutionContextHost; headers: Map<string, string> } {
  const headers = new Map<string, string>();
  const res = { header: (name: string, value: string) => headers.set(name.toLowerCase(), value) };
  const req = { ip: '203.0.113.9', headers: {} };
  return { context: new ExecutionContextHost([req, res], Routes, handler), headers };
}

/** The storages made for the tests: each has a sweep timer, stopped after each test. */
const storages: ThrottlerStorageService[] = [];

async function guardWith(throttlers: ThrottlerOptions[]): Promise<RateLimitGuard> {
  const storage = new ThrottlerStorageService();
  storages.push(storage);
  const guard = new RateLimitGuard({ throttlers }, storage, new Reflector());
  await guard.onModuleInit();
  return guard;
}

afterEach(() => {
  for (const storage of storages.splice(0)) storage.onApplicationShutdown();
});

/** The statuses of `count` requests to a route: 200 when let through, else the refusal's. */
async function statuses(guard: RateLimitGuard, handler: () => void, count: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) {
    try {
      seen.push((await guard.canActivate(requestOf(handler).context)) ? 200 : 403);
    } catch (error) {
      seen.push(error instanceof ApiError ? error.status : 500);
    }
  }
  return seen;
}

describe('RateLimitGuard', () => {
  const numbers: ThrottlerOptions[] = [
    { name: 'default', ttl: 60_000, limit: 2, blockDuration: 0 },
    { name: 'ingest', ttl: 60_000, limit: 1, blockDuration: 0 },
  ];

  it("counts a route against its own bucket only, with that bucket's limit", async () => {
    const guard = await guardWith(numbers);
    expect(await statuses(guard, Routes.prototype.chat, 3)).toEqual([200, 200, 429]);
    expect(await statuses(guard, Routes.prototype.ingest, 2)).toEqual([200, 429]);
    expect(await statuses(guard, Routes.prototype.health, 5)).toEqual([200, 200, 200, 200, 200]);
    const { context, headers } = requestOf(Routes.prototype.ingest);
    await expect(guard.canActivate(context)).rejects.toThrow(ApiError);
    expect(headers.get('x-ratelimit-limit')).toBe('1');
    expect(headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('lets everything through a bucket whose limit is 0', async () => {
    const guard = await guardWith([{ ...numbers[0], limit: 0 }, numbers[1]]);
    expect(await statuses(guard, Routes.prototype.chat, 4)).toEqual([200, 200, 200, 200]);
    expect(await statuses(guard, Routes.prototype.ingest, 2)).toEqual([200, 429]);
  });

  it('applies limits given as functions the same way, through the library', async () => {
    const guard = await guardWith(
      numbers.map((throttler) => ({ ...throttler, limit: () => throttler.limit as number })),
    );
    expect(await statuses(guard, Routes.prototype.chat, 3)).toEqual([200, 200, 429]);
    expect(await statuses(guard, Routes.prototype.ingest, 2)).toEqual([200, 429]);
  });
});

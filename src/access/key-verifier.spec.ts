import { BackgroundWork } from '../common/background-work';
import { ApiKeysRepository } from './api-keys.repository';
import { ApplicationsRepository, StoredApplication } from './applications.repository';
import { KEY_CACHE_MS, KeyVerifier } from './key-verifier';

const APPLICATION: StoredApplication = { id: 'a1', name: 'billing', createdAt: new Date(0) };

/** A read of the applications table that answers when the test says so. */
function heldReads() {
  const pending: Array<{ resolve: (value: StoredApplication | null) => void; reject: (e: Error) => void }> =
    [];
  const find = jest.fn(
    () => new Promise<StoredApplication | null>((resolve, reject) => pending.push({ resolve, reject })),
  );
  const verifier = new KeyVerifier(
    {} as ApiKeysRepository,
    { find } as unknown as ApplicationsRepository,
    {} as BackgroundWork,
  );
  return { verifier, find, pending };
}

describe('KeyVerifier', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('sends one query for the requests that find an entry missing or stale together', async () => {
    const { verifier, find, pending } = heldReads();
    const first = Array.from({ length: 20 }, () => verifier.application('billing'));
    expect(find).toHaveBeenCalledTimes(1);
    pending[0].resolve(APPLICATION);
    expect(await Promise.all(first)).toEqual(Array(20).fill(APPLICATION));

    // trusted until KEY_CACHE_MS: no query
    await verifier.application('billing');
    expect(find).toHaveBeenCalledTimes(1);

    jest.advanceTimersByTime(KEY_CACHE_MS);
    const again = Array.from({ length: 20 }, () => verifier.application('billing'));
    expect(find).toHaveBeenCalledTimes(2);
    pending[1].resolve(null);
    expect(await Promise.all(again)).toEqual(Array(20).fill(null));
  });

  it('reads each name on its own', () => {
    const { verifier, find } = heldReads();
    void verifier.application('billing');
    void verifier.application('search');
    expect(find.mock.calls).toEqual([['billing'], ['search']]);
  });

  it('keeps no failed read: its waiters get the error and the next request reads again', async () => {
    const { verifier, find, pending } = heldReads();
    const waiting = [verifier.application('billing'), verifier.application('billing')];
    expect(find).toHaveBeenCalledTimes(1);
    pending[0].reject(new Error('connection lost'));
    for (const request of waiting) await expect(request).rejects.toThrow('connection lost');
    const next = verifier.application('billing');
    expect(find).toHaveBeenCalledTimes(2);
    pending[1].resolve(APPLICATION);
    await expect(next).resolves.toEqual(APPLICATION);
  });
});

import { ServingLoad } from './serving-load';

/** Keeps the event loop busy (never idle) for `ms`. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const idle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ServingLoad', () => {
  it('is busy only while an answer is in flight and the loop was busy past the threshold', () => {
    const load = new ServingLoad(0.8);
    spin(250);
    expect(load.busy()).toBe(false); // no answer in flight
    const end = load.begin();
    spin(250);
    expect(load.busy()).toBe(true);
    end();
    expect(load.busy()).toBe(false);
  });

  it('is not busy when the loop had time to spare, answers in flight or not', async () => {
    const load = new ServingLoad(0.8);
    const end = load.begin();
    // a second, so that a loaded machine holding this process for a moment cannot make it 80 % busy
    await idle(1000);
    expect(load.busy()).toBe(false);
    end();
  });

  it('judges a burst after a quiet spell by the time answers were in flight, not the quiet before', async () => {
    const load = new ServingLoad(0.8);
    const first = load.begin();
    spin(250);
    expect(load.busy()).toBe(true);
    first();
    await idle(600); // nothing in flight: not part of the next sample
    const end = load.begin();
    expect(load.busy()).toBe(true); // the burst's first sample is not complete: the last one stands
    spin(250);
    expect(load.busy()).toBe(true);
    end();
  });

  it('leaves out the gaps between answers, and counts the waits within them', async () => {
    const load = new ServingLoad(0.8);
    for (let i = 0; i < 3; i++) {
      const end = load.begin();
      spin(100);
      end();
      await idle(300);
    }
    const end = load.begin();
    expect(load.busy()).toBe(true); // 300 ms in flight, all busy; 900 ms of gaps left out
    await idle(1000); // an answer in flight that waits: the loop has time
    expect(load.busy()).toBe(false);
    end();
  });

  it('ends an answer once however often its end is called', () => {
    const load = new ServingLoad(0);
    const first = load.begin();
    const second = load.begin();
    first();
    first();
    expect(load.inFlight).toBe(1);
    expect(load.busy()).toBe(true); // threshold 0: any answer in flight
    second();
    expect(load.inFlight).toBe(0);
  });

  it('never counts the process busy with threshold 1', () => {
    const load = new ServingLoad(1);
    load.begin();
    spin(250);
    expect(load.busy()).toBe(false);
  });

  it('yields until the answers end, the deadline passes or the signal aborts', async () => {
    const load = new ServingLoad(0);
    const never = new AbortController().signal;
    const end = load.begin();
    let done = false;
    const waiting = load.yieldWhileBusy(performance.now() + 60_000, never).then(() => (done = true));
    await idle(120);
    expect(done).toBe(false);
    end();
    await waiting;

    load.begin();
    const started = performance.now();
    await load.yieldWhileBusy(started + 100, never);
    expect(performance.now() - started).toBeGreaterThanOrEqual(99);

    const stop = new AbortController();
    const aborted = load.yieldWhileBusy(performance.now() + 60_000, stop.signal);
    stop.abort();
    await aborted;
  });
});

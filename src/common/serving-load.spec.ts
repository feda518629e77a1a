import { LoopTime, ServingLoad } from './serving-load';

/** Keeps the event loop busy (never idle) for `ms`. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const idle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An event loop whose time the test moves: `work` is time spent busy, `wait` time spent waiting for
 * events. The process's own loop counts as busy whatever time the machine holds the process, which
 * a loaded CI machine did for long enough to fail a test that waited a whole second.
 */
class ScriptedLoop {
  private readonly time: LoopTime = { active: 0, idle: 0 };
  readonly read = (): LoopTime => ({ ...this.time });

  work(ms: number): void {
    this.time.active += ms;
  }

  wait(ms: number): void {
    this.time.idle += ms;
  }
}

describe('ServingLoad', () => {
  let loop: ScriptedLoop;
  let load: ServingLoad;

  beforeEach(() => {
    loop = new ScriptedLoop();
    load = new ServingLoad(0.8, loop.read);
  });

  it('is busy only while an answer is in flight and the loop was busy past the threshold', () => {
    loop.work(250);
    expect(load.busy()).toBe(false); // no answer in flight
    const end = load.begin();
    loop.work(250);
    expect(load.busy()).toBe(true);
    end();
    expect(load.busy()).toBe(false);
  });

  it("reads the process's own event loop by default", () => {
    const processLoad = new ServingLoad(0.8);
    const end = processLoad.begin();
    spin(250);
    expect(processLoad.busy()).toBe(true);
    end();
  });

  it('is not busy when the loop had time to spare, answers in flight or not', () => {
    const end = load.begin();
    loop.work(150);
    loop.wait(850);
    expect(load.busy()).toBe(false);
    end();
    loop.wait(1000);
    expect(load.busy()).toBe(false);
  });

  it('judges a burst after a quiet spell by the time answers were in flight, not the quiet before', () => {
    const first = load.begin();
    loop.work(250);
    expect(load.busy()).toBe(true);
    first();
    loop.wait(600); // nothing in flight: not part of the next sample
    const end = load.begin();
    expect(load.busy()).toBe(true); // the burst's first sample is not complete: the last one stands
    loop.work(250);
    expect(load.busy()).toBe(true);
    end();
  });

  it('leaves out the gaps between answers, and counts the waits within them', () => {
    for (let i = 0; i < 3; i++) {
      const end = load.begin();
      loop.work(100);
      end();
      loop.wait(300);
    }
    const end = load.begin();
    expect(load.busy()).toBe(true); // 300 ms in flight, all busy; 900 ms of gaps left out
    loop.wait(1000); // an answer in flight that waits: the loop has time
    expect(load.busy()).toBe(false);
    end();
  });

  it('counts the process busy at the threshold and not below it', () => {
    const end = load.begin();
    loop.work(160);
    loop.wait(40);
    expect(load.busy()).toBe(true); // 80 % of a full sample
    loop.work(159);
    loop.wait(41);
    expect(load.busy()).toBe(false); // 79.5 %
    end();
  });

  it('ends an answer once however often its end is called', () => {
    const load = new ServingLoad(0, loop.read);
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
    const never = new ServingLoad(1, loop.read);
    never.begin();
    loop.work(250);
    expect(never.busy()).toBe(false);
  });

  it('yields until the answers end, the deadline passes or the signal aborts', async () => {
    const load = new ServingLoad(0, loop.read);
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

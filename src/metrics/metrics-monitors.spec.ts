import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Registry } from 'prom-client';

// what test/setup/process-monitors.js keeps for the file, on the process's own module
// eslint-disable-next-line @typescript-eslint/no-require-imports
const started = (require('node:perf_hooks') as Record<symbol, { stopAll(): void }>)[
  Symbol.for('pms.test.startedMonitors')
];

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Whether what `ref` points to is still there after the current job ends and a full collection. */
async function survivesCollection(ref: WeakRef<object>): Promise<boolean> {
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  return ref.deref() !== undefined;
}

describe("an app's metrics and the process's monitors", () => {
  it('keep the registry of a closed app reachable until the monitors its default metrics started are stopped', async () => {
    let registry: WeakRef<Registry> | undefined;
    jest.isolateModules(() => {
      // a module registry of its own, as each test file has
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { MetricsService } = require('./metrics.service') as typeof import('./metrics.service');
      registry = new WeakRef(new MetricsService().registry);
    });
    // prom-client's GC observer and event-loop delay monitor hold it: without the stop, every test
    // file's app stayed in memory until its worker ended
    expect(await survivesCollection(registry!)).toBe(true);
    started.stopAll();
    expect(await survivesCollection(registry!)).toBe(false);
  });
});

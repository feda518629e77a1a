// Jest runs the test files of a worker one after another in one process, each file in a module
// registry of its own. prom-client's default metrics (every app's MetricsService) start a GC
// observer and an event-loop delay monitor, which run until the process ends: in production a process
// runs one app, but here each would hold its file's whole module registry, with the file's last app
// and its in-memory database (about 30 MB of heap and 40 MB of WebAssembly memory a file). This stops
// what a file started when the file ends.
const perfHooks = require('node:perf_hooks');

// the module is the process's own, shared by every file's registry: wrapped once per process
const STARTED = Symbol.for('pms.test.startedMonitors');
if (!perfHooks[STARTED]) {
  const started = [];
  const { PerformanceObserver, monitorEventLoopDelay } = perfHooks;
  perfHooks.PerformanceObserver = class extends PerformanceObserver {
    constructor(callback) {
      super(callback);
      started.push(() => this.disconnect());
    }
  };
  perfHooks.monitorEventLoopDelay = (options) => {
    const histogram = monitorEventLoopDelay(options);
    started.push(() => histogram.disable());
    return histogram;
  };
  perfHooks[STARTED] = {
    stopAll: () => {
      for (const stop of started.splice(0)) stop();
    },
  };
}

afterAll(() => perfHooks[STARTED].stopAll());

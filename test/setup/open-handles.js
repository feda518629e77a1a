// TEST_OPEN_HANDLES=<file>: after each test file, appends to <file> the timers, sockets, servers,
// child processes and worker threads still open that keep the process alive, each with where it was
// made; and when Jest force-ends a worker that did not exit (its SIGTERM, 500 ms after the worker's
// last file: "A worker process has failed to exit gracefully"), everything that held it.
// `--detectOpenHandles` runs in band and reports only some handles; this finds the file that leaves
// one. A diagnostic: it records a stack for every such handle, so tests run slower with it.
const { appendFileSync } = require('node:fs');
const asyncHooks = require('node:async_hooks');
// the process itself: a test file's `process` (and what it requires as `process`) is a copy per file
const realProcess = require('node:vm').runInThisContext('process');

const TRACKED = new Set([
  'Timeout',
  'TCPWRAP',
  'TCPSERVERWRAP',
  'PIPEWRAP',
  'PIPESERVERWRAP',
  'PROCESSWRAP',
  'SIGNALWRAP',
  'UDPWRAP',
  'WORKER',
  'MESSAGEPORT',
  'FSEVENTWRAP',
  'STATWATCHER',
]);
// Jest's own timers (the hook and test timeouts) are not the test's
const JEST_FRAMES = /node_modules\/(jest-circus|jest-runner|jest-worker)\//;

function isOpen({ type, resource }) {
  if (typeof resource.hasRef === 'function' && !resource.hasRef()) return false;
  return !(type === 'Timeout' && resource._destroyed);
}

function described({ type, resource, where }) {
  const after = type === 'Timeout' ? ` ${resource._idleTimeout} ms` : '';
  return `  ${type}${after} at ${where.length > 0 ? where.join(' < ') : '(node internals only)'}`;
}

function trackOpenHandles(file) {
  if (realProcess.__openHandles) return realProcess.__openHandles;
  const open = new Map();
  realProcess.__openHandles = open;
  asyncHooks
    .createHook({
      init(id, type, _trigger, resource) {
        if (!TRACKED.has(type)) return;
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 12;
        const frames = new Error().stack.split('\n').slice(1);
        Error.stackTraceLimit = limit;
        const where = frames
          .map((frame) => frame.trim().replace(/^at /, ''))
          .filter((frame) => !frame.includes('(node:') && !frame.includes(__filename))
          .slice(0, 4);
        open.set(id, { type, resource, where });
      },
      destroy(id) {
        open.delete(id);
      },
    })
    .enable();
  realProcess.once('SIGTERM', () => {
    const held = [...open.values()].filter(isOpen).map(described);
    const kinds = JSON.stringify(realProcess.getActiveResourcesInfo());
    appendFileSync(file, `worker ${realProcess.pid} force-ended, held by ${kinds}\n${held.join('\n')}\n`);
    realProcess.exit(143);
  });
  return open;
}

const file = process.env.TEST_OPEN_HANDLES;
if (file) {
  const open = trackOpenHandles(file);
  afterAll(async () => {
    // what closes on its own a moment after the last test is not a leak
    await new Promise((resolve) => setTimeout(resolve, 200).unref());
    const held = [...open.values()]
      .filter((handle) => isOpen(handle) && !JEST_FRAMES.test(handle.where[0] ?? ''))
      .map(described);
    if (held.length > 0) {
      appendFileSync(file, `${expect.getState().testPath} (worker ${realProcess.pid})\n${held.join('\n')}\n`);
    }
  });
}

// Preloaded into the built service by a test (`node -r`): on SIGUSR2 it writes to stderr whether
// promise hooks are on in the process. With none, a promise reaction runs under async id 0; an
// AsyncLocalStorage that was ever run (or any async hook with a promise callback) gives it an id.
const { executionAsyncId } = require('node:async_hooks');

process.on('SIGUSR2', () => {
  void Promise.resolve()
    .then(() => executionAsyncId())
    .then((id) => process.stderr.write(`promise-hooks:${id !== 0 ? 'on' : 'off'}\n`));
});

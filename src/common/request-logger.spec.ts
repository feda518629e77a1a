import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { PinoLoggerService } from '../logging/app-logger';
import { REQUEST_LOG, requestLogger } from './request-logger';

/** A pino logger writing into `lines`, one parsed JSON object each. */
function capture(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

const flushed = () => new Promise((resolve) => setImmediate(resolve));

describe('lines as Nest logs them', () => {
  const stack = 'Error: boom\n    at handler (/app/dist/x.js:1:1)';

  it("puts the request's id and the context on the lines about a request", async () => {
    const { logger, lines } = capture();
    const req = { [REQUEST_LOG]: { root: logger, requestId: 'req-1' } } as unknown as IncomingMessage;
    requestLogger(req, 'RateLimit').debug('rate limit exceeded');
    requestLogger(req, 'ExceptionFilter').error('Unexpected error e-1', stack);
    await flushed();
    expect(lines[0]).toMatchObject({ requestId: 'req-1', context: 'RateLimit', msg: 'rate limit exceeded' });
    expect(lines[1]).toMatchObject({
      requestId: 'req-1',
      context: 'ExceptionFilter',
      msg: 'Unexpected error e-1',
      err: { type: 'Error', message: 'Unexpected error e-1', stack },
    });
    expect(lines[1]).not.toHaveProperty('stack');
  });

  it("writes Nest's error(message, stack, context) with the stack in err, and nothing else as a stack", async () => {
    const { logger, lines } = capture();
    const nest = new PinoLoggerService(logger);
    nest.error('could not start', stack, 'Bootstrap');
    nest.warn('slow', 'not a stack', 'Pool');
    nest.log('listening');
    nest.error(new Error('thrown'), 'Worker');
    await flushed();
    expect(lines[0]).toMatchObject({ context: 'Bootstrap', msg: 'could not start', err: { stack } });
    expect(lines[1]).toEqual(expect.objectContaining({ context: 'Pool', msg: 'slow' }));
    expect(lines[1]).not.toHaveProperty('stack');
    expect(lines[2]).toMatchObject({ msg: 'listening' });
    expect(lines[2]).not.toHaveProperty('context');
    expect(lines[3]).toMatchObject({ context: 'Worker', msg: 'thrown', err: { message: 'thrown' } });
  });
});

import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import { parseJsonBodyText } from './json-body-text';

/** Bodies of at least this many bytes are parsed on the thread: their parse would hold the event loop. */
export const JSON_THREAD_BYTES = 1024 * 1024;

/**
 * The thread's program: decodes the bytes (invalid ones as U+FFFD, as `Buffer.toString` does) and reads
 * them as a body is read on the event loop (parseJsonBodyText, whose source it carries).
 */
const PROGRAM = `
const { parentPort } = require('node:worker_threads');
const parseJsonBodyText = ${parseJsonBodyText.toString()};
parentPort.on('message', ({ id, bytes }) => {
  let value;
  try {
    value = parseJsonBodyText(Buffer.from(bytes).toString('utf8'));
  } catch {
    parentPort.postMessage({ id, failed: true });
    return;
  }
  parentPort.postMessage({ id, value });
});
`;

interface Answer {
  id: number;
  failed?: true;
  value?: unknown;
}

/** The thread's answer when the bytes are not JSON that a body may be. */
export class JsonBodyParseError extends Error {}

/**
 * Parses large JSON bodies on a worker thread, so that the event loop goes on answering other requests
 * meanwhile: the bytes are handed over (transferred, not copied) and the parsed value comes back by
 * structured clone, which rebuilds its long strings with a copy each. One thread per application,
 * started with its first large body (most deployments never see one) and stopped when the
 * application closes; bodies are parsed one after the other. A thread that dies fails the bodies it
 * held, and the next body starts another.
 */
@Injectable()
export class JsonParseThread implements OnModuleDestroy {
  private worker: Worker | undefined;
  private readonly waiting = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  private nextId = 0;

  /** `fromBytes`: the size from which `wants` sends a body here. */
  constructor(readonly fromBytes: number = JSON_THREAD_BYTES) {}

  /** Whether a body of `bytes` is parsed here. */
  wants(bytes: number): boolean {
    return bytes >= this.fromBytes;
  }

  /**
   * The value of the JSON in `bytes`. Bytes that are the whole of their buffer are handed over (unusable
   * here afterwards); a view into a larger buffer is copied, that buffer left as it is.
   */
  async parse(bytes: Uint8Array): Promise<unknown> {
    const worker = this.started();
    const id = this.nextId++;
    const own =
      bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
    return await new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, bytes: own }, [own.buffer as ArrayBuffer]);
    });
  }

  async onModuleDestroy(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private started(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(PROGRAM, { eval: true });
    // an idle thread never keeps the process alive; a body it parses comes with its open request
    worker.unref();
    worker.on('message', ({ id, failed, value }: Answer) => {
      const waiter = this.waiting.get(id);
      this.waiting.delete(id);
      if (failed) waiter?.reject(new JsonBodyParseError('not JSON'));
      else waiter?.resolve(value);
    });
    const lost = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the JSON parsing thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }
}

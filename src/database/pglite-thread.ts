import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isArrayBuffer } from 'node:util/types';
import { Worker } from 'node:worker_threads';

/**
 * The thread's program. It opens PGlite with the extensions, then answers requests one after the
 * other, in the order they come: protocol messages with PostgreSQL's raw replies (handed over, not
 * copied), a dump of the data directory, closing. The replies are taken with execProtocolRawStream:
 * execProtocolRaw would also parse them and keep every parsed message until the next execProtocol.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.modules.pglite);
const { btree_gin } = require(workerData.modules.btreeGin);
const { vector } = require(workerData.modules.vector);
let pglite;
let queue = Promise.resolve();
parentPort.on('message', (request) => {
  queue = queue.then(() => answer(request));
});
async function answer({ id, op, args }) {
  try {
    const value = await run(op, args);
    parentPort.postMessage({ id, value }, value instanceof Uint8Array ? [value.buffer] : []);
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
}
async function run(op, args) {
  if (op === 'open') {
    pglite = await PGlite.create({
      dataDir: args.dataDir,
      loadDataDir: args.template,
      extensions: { btree_gin, vector },
      pgliteWasmModule: args.pgliteWasmModule,
      initdbWasmModule: args.initdbWasmModule,
    });
    await pglite.exec(args.sessionSql);
    return undefined;
  }
  if (op === 'protocol') {
    const messages = joined(args);
    const replies = [];
    await pglite.execProtocolRawStream(messages, { onRawData: (bytes) => replies.push(bytes.slice()) });
    return joined(replies);
  }
  if (op === 'dump') return new Uint8Array(await (await pglite.dumpDataDir('none')).arrayBuffer());
  if (op === 'close') return void (await pglite?.close());
  throw new Error('unknown request ' + op);
}
function joined(parts) {
  if (parts.length === 1) return parts[0];
  let length = 0;
  for (const part of parts) length += part.length;
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return bytes;
}
`;

/** The part of the WebAssembly API used here (Node has it; the project's lib leaves it out). */
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> };
/** A compiled WebAssembly module: opaque here, and handed to the thread as it is. */
type WasmModule = object;

/** Where the thread loads PGlite and the extensions from (resolved here: the thread has no module path). */
function modulePaths() {
  return {
    pglite: require.resolve('@electric-sql/pglite'),
    btreeGin: require.resolve('@electric-sql/pglite/contrib/btree_gin'),
    vector: require.resolve('@electric-sql/pglite-pgvector'),
  };
}

interface CompiledPglite {
  pgliteWasmModule: WasmModule;
  initdbWasmModule: WasmModule;
}

let compiled: Promise<CompiledPglite> | undefined;

/**
 * PGlite's WebAssembly, compiled once per process (about 0.2 s of CPU) and handed to every thread:
 * threads share the compiled code.
 */
function compiledPglite(): Promise<CompiledPglite> {
  compiled ??= (async () => {
    const dist = dirname(require.resolve('@electric-sql/pglite'));
    const [pglite, initdb] = await Promise.all([
      readFile(join(dist, 'pglite.wasm')).then((bytes) => WebAssembly.compile(bytes)),
      readFile(join(dist, 'initdb.wasm')).then((bytes) => WebAssembly.compile(bytes)),
    ]);
    return { pgliteWasmModule: pglite, initdbWasmModule: initdb };
  })();
  compiled.catch(() => {
    compiled = undefined;
  });
  return compiled;
}

/** Messages at least this long are handed over to the thread; shorter ones are copied (see execProtocol). */
const HAND_OVER_BYTES = 64 * 1024;

export interface PgliteThreadOptions {
  /** A directory of the file system, or undefined for a database in memory. */
  dataDir?: string;
  /** A dump (dumpDataDir) the database in memory starts from. */
  template?: Blob;
  /** Statements run once the database is open. */
  sessionSql: string;
}

/**
 * The embedded PostgreSQL (PGlite) on a worker thread: its WebAssembly runs there, so that a statement
 * holding it for half a second (inserting a row of megabytes) never holds the event loop. Requests go
 * to the thread in the order they are made and are answered in that order. The thread keeps the
 * process alive only while a request is open; a thread that dies fails the requests it held and every
 * later one.
 */
export class PgliteThread {
  /** Settles when the database is open (rejects when it cannot be opened). */
  readonly waitReady: Promise<void>;
  private readonly worker: Worker;
  private readonly waiting = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  private nextId = 0;
  /** Why the thread is unusable: closed, or dead. */
  private lost: Error | undefined;
  /** Settles when the opening is over: requests wait for it, so none reaches the thread before. */
  private readonly opening: Promise<void>;

  constructor(options: PgliteThreadOptions) {
    this.worker = new Worker(PROGRAM, { eval: true, workerData: { modules: modulePaths() } });
    this.worker.on('message', ({ id, value, error }: { id: number; value?: unknown; error?: string }) => {
      const waiter = this.waiting.get(id);
      this.waiting.delete(id);
      if (this.waiting.size === 0) this.worker.unref();
      if (error !== undefined) waiter?.reject(new Error(error));
      else waiter?.resolve(value);
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the embedded database's thread exited (${code})`)));
    // the thread stays referenced until the database is open: nothing else may keep the process alive.
    // The template (a Blob) goes to the thread without a copy of its bytes.
    const { dataDir, template, sessionSql } = options;
    const opened = compiledPglite().then((wasm) =>
      this.post('open', { dataDir, template, sessionSql, ...wasm }, []),
    );
    this.opening = opened.then(
      () => undefined,
      (error: Error) => {
        this.lost ??= error;
        void this.worker.terminate();
      },
    );
    this.waitReady = opened.then(() => undefined);
    // a failed opening is reported to whoever waits for it; this only keeps it from being unhandled
    this.waitReady.catch(() => undefined);
  }

  get closed(): boolean {
    return this.lost !== undefined;
  }

  /**
   * PostgreSQL's replies to protocol messages, executed in one call. Long messages are handed over
   * (their buffers are unusable afterwards), short ones copied.
   */
  async execProtocol(messages: Uint8Array[]): Promise<Uint8Array> {
    const transfer: ArrayBuffer[] = [];
    const sent = messages.map((message) => {
      if (message.length < HAND_OVER_BYTES || !isArrayBuffer(message.buffer)) {
        // a short Buffer may be a slice of Node's shared pool, which must not move
        const copy = new Uint8Array(message);
        transfer.push(copy.buffer);
        return copy;
      }
      transfer.push(message.buffer);
      return message;
    });
    return (await this.request('protocol', sent, transfer)) as Uint8Array;
  }

  /** A dump of the data directory (tar), as PGlite's dumpDataDir('none') makes it. */
  async dumpDataDir(): Promise<Blob> {
    return new Blob([(await this.request('dump', undefined, [])) as Uint8Array]);
  }

  /** Closes the database and ends the thread. */
  async close(): Promise<void> {
    if (this.lost !== undefined) return;
    try {
      await this.request('close', undefined, []);
    } finally {
      this.lost = new Error('the embedded database is closed');
      await this.worker.terminate();
    }
  }

  private async request(op: string, args: unknown, transfer: ArrayBuffer[]): Promise<unknown> {
    await this.opening;
    return await this.post(op, args, transfer);
  }

  private post(op: string, args: unknown, transfer: ArrayBuffer[]): Promise<unknown> {
    if (this.lost !== undefined) return Promise.reject(this.lost);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, op, args }, transfer);
    });
  }

  private fail(error: Error): void {
    this.lost ??= error;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }
}

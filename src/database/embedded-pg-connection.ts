import { EventEmitter } from 'node:events';
import { serialize } from 'pg-protocol';
import { Parser } from 'pg-protocol/dist/parser';
import type { PgliteThread } from './pglite-thread';

/**
 * The connection of node-postgres to the embedded database: node-postgres's client speaks the wire
 * protocol to it, and PGlite executes the messages on its thread (PgliteThread). What node-postgres
 * writes between corking and uncorking its stream (parse, bind, describe, execute and sync of one
 * query) goes to the thread in one request: each costs a hop to the thread and back, and a pass through
 * PGlite's main loop and its file sync. Messages outside a cork (simple queries, copy data) go at once.
 * Requests go without waiting for the replies of earlier ones; the replies come back as PostgreSQL's
 * bytes, which node-postgres's own parser reads here, and are emitted in order as node-postgres's own
 * connection emits them.
 */
export class EmbeddedPgConnection extends EventEmitter {
  /** Read by node-postgres: the statements prepared on this connection. */
  parsedStatements: Record<string, string> = {};
  submittedNamedStatements: Record<string, string> = {};
  /** Read by node-postgres's Client.end(), which skips connection.end() without it. */
  _connecting = false;
  /** node-postgres corks it around a query's messages, and destroys it when a query is still active at end. */
  readonly stream = {
    cork: () => {
      this.corked++;
    },
    uncork: () => {
      if (this.corked > 0 && --this.corked === 0) this.flushPending();
    },
    destroy: () => this.end(),
  };

  private corked = 0;
  private pending: Uint8Array[] = [];
  private replies: Promise<unknown> = Promise.resolve();
  private readonly parser = new Parser();
  private emitsMessages = false;

  constructor(private readonly thread: PgliteThread) {
    super();
    this.on('newListener', (event) => {
      if (event === 'message') this.emitsMessages = true;
    });
  }

  connect(): void {
    this._connecting = true;
    this.thread.waitReady.then(
      () => process.nextTick(() => this.emit('readyForQuery')),
      (error: Error) => this.emitError(error),
    );
  }

  // the start-up, authentication and cancellation of a network connection have no meaning here
  requestSsl(): void {}
  startup(): void {}
  cancel(): void {}
  password(): void {}
  ref(): void {}
  unref(): void {}

  query(text: string): void {
    this.send(serialize.query(text));
  }

  parse(query: Parameters<typeof serialize.parse>[0]): void {
    this.send(serialize.parse(query));
  }

  bind(config: Parameters<typeof serialize.bind>[0]): void {
    this.send(serialize.bind(config));
  }

  execute(config: Parameters<typeof serialize.execute>[0]): void {
    this.send(serialize.execute(config));
  }

  describe(message: Parameters<typeof serialize.describe>[0]): void {
    this.send(serialize.describe(message));
  }

  close(message: Parameters<typeof serialize.close>[0]): void {
    this.send(serialize.close(message));
  }

  flush(): void {
    this.send(serialize.flush());
  }

  sync(): void {
    this.send(serialize.sync());
  }

  sendCopyFromChunk(chunk: Buffer): void {
    this.send(serialize.copyData(chunk));
  }

  endCopyFrom(): void {
    this.send(serialize.copyDone());
  }

  sendCopyFail(message: string): void {
    this.send(serialize.copyFail(message));
  }

  /**
   * Like a socket closing: node-postgres waits for 'end'. The PGlite instance stays open (the
   * application owns it), and the pool's next client reuses this connection, so the ended client's
   * listeners go.
   */
  end(): void {
    this.replies = this.replies.then(() => this.emit('end'));
    for (const event of this.eventNames()) {
      if (event !== 'newListener') this.removeAllListeners(event);
    }
    this.emitsMessages = false;
  }

  private send(message: Uint8Array): void {
    this.pending.push(message);
    if (this.corked === 0) this.flushPending();
  }

  private flushPending(): void {
    if (this.pending.length === 0) return;
    const replies = this.thread.execProtocol(this.pending);
    this.pending = [];
    this.replies = this.replies
      .then(() => replies)
      .then((bytes) => {
        this.parser.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), (reply) => {
          if (this.emitsMessages) this.emit('message', reply);
          // node-postgres expects an ErrorResponse as 'errorMessage'
          this.emit(reply.name === 'error' ? 'errorMessage' : reply.name, reply);
        });
      })
      .catch((error: Error) => this.emitError(error));
  }

  /** Like a socket's error: node-postgres fails the query (or the connecting) and drops the client. */
  private emitError(error: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }
}

/** node-postgres options that make a pool of one client over the embedded database. */
export function embeddedPgOptions(thread: PgliteThread) {
  return {
    connection: new EmbeddedPgConnection(thread),
    // dummies: node-postgres asks for them, PGlite ignores them
    user: 'postgres',
    password: 'dummy',
    database: 'postgres',
    host: 'localhost',
    port: 5432,
  };
}

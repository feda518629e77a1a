import type { PGlite } from '@electric-sql/pglite';
import { EventEmitter } from 'node:events';
import { serialize } from 'pg-protocol';
import { TEXT_SLICE } from '../common/text-slices';

/** What node-postgres reads from a pg connection's messages: a name, and the message's own fields. */
interface BackendMessage {
  name: string;
}

/**
 * The longest PGlite may hold the event loop without a turn for other work. PGlite runs on the event
 * loop's thread, and a query's reply comes as an already settled promise: queries queued behind each
 * other (a backlog of extraction, a burst of turns to store) would otherwise all run before the loop
 * reads a socket or fires a timer, stalling answers and health checks for seconds.
 */
const MAX_HOLD_MS = 5;
let lastTurnAt = 0;

/** Resolves at once, or after the event loop had a turn when PGlite has held it for MAX_HOLD_MS. */
function eventLoopTurn(): Promise<void> | undefined {
  if (performance.now() - lastTurnAt < MAX_HOLD_MS) return undefined;
  return new Promise((resolve) =>
    setImmediate(() => {
      lastTurnAt = performance.now();
      resolve();
    }),
  );
}

/**
 * The connection of node-postgres to the embedded database: node-postgres's client speaks the wire
 * protocol to it, and PGlite executes the messages in the process. What node-postgres writes between
 * corking and uncorking its stream (parse, bind, describe, execute and sync of one query) goes to PGlite
 * in one call: each call costs a pass through PGlite's main loop, its file sync and a promise chain, and
 * a query sent message by message made four or five of them (about 0.03 ms each, 20 calls per learnt
 * chat turn). Messages outside a cork (simple queries, copy data) go at once. Calls run one after the
 * other, in order, giving the event loop a turn at least every MAX_HOLD_MS; replies are emitted as
 * node-postgres's own connection emits them.
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
  private calls: Promise<unknown>;
  private emitsMessages = false;

  constructor(private readonly pglite: PGlite) {
    super();
    this.calls = pglite.waitReady;
    this.on('newListener', (event) => {
      if (event === 'message') this.emitsMessages = true;
    });
  }

  async connect(): Promise<void> {
    this._connecting = true;
    await this.pglite.waitReady;
    process.nextTick(() => this.emit('readyForQuery'));
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
    this.calls = this.calls.then(() => this.emit('end'));
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
    // a query carrying megabytes goes message by message: no copy of its parameters to join them
    const calls = inOneCall(this.pending) ? [Buffer.concat(this.pending)] : this.pending;
    this.pending = [];
    for (const messages of calls) this.run(messages);
  }

  private run(messages: Uint8Array): void {
    this.calls = this.calls
      .then(eventLoopTurn)
      .then(() => this.pglite.execProtocolStream(messages, { throwOnError: false }))
      .then((replies) => {
        for (const reply of replies as BackendMessage[]) {
          if (this.emitsMessages) this.emit('message', reply);
          // node-postgres expects an ErrorResponse as 'errorMessage'
          this.emit(reply.name === 'error' ? 'errorMessage' : reply.name, reply);
        }
      })
      .catch((error: unknown) => {
        this.emit('error', error);
      });
  }
}

/** Whether messages go to PGlite joined in one call: several, together shorter than TEXT_SLICE. */
function inOneCall(messages: Uint8Array[]): boolean {
  if (messages.length === 1) return false;
  let length = 0;
  for (const message of messages) length += message.length;
  return length <= TEXT_SLICE;
}

/** node-postgres options that make a pool of one client over the embedded database. */
export function embeddedPgOptions(pglite: PGlite) {
  return {
    connection: new EmbeddedPgConnection(pglite),
    // dummies: node-postgres asks for them, PGlite ignores them
    user: 'postgres',
    password: 'dummy',
    database: 'postgres',
    host: 'localhost',
    port: 5432,
  };
}

import type { HeaderMap } from '../upstream/relay-headers';
import { ClientConnection, waitForDrain } from './client-connection';

export interface EventStreamTiming {
  /** A client that reads nothing for this long is cut (and the upstream request aborted). */
  idleTimeoutMs: number;
  /** A comment line is sent when nothing was written for this long (0: never). */
  keepAliveMs: number;
}

const KEEP_ALIVE = ': keep-alive\n\n';

/**
 * Writes a server-sent event stream to the client. It waits while the client's buffer is full (the
 * upstream is not read meanwhile, so nothing piles up in memory), cuts a client that stops reading for
 * longer than the idle timeout, and sends keep-alive comments while the upstream is silent (long
 * thinking phases), so that proxies and clients do not give up on a quiet stream. A comment is only
 * written between two events, never inside one that the upstream sent in pieces.
 *
 * What is written in one turn of the event loop (the headers and the first events, or events that
 * arrived together) leaves in one send: the response is corked until the turn's I/O has been handled
 * (`setImmediate`). Each send is a system call, which on a short answer cost more than the rest of the
 * relay's work per event.
 */
export class EventStreamWriter {
  private corked = false;
  private atEventBoundary = true;
  private lastWriteAt = Date.now();
  private readonly keepAlives: KeepAliveSweep | undefined;

  constructor(
    private readonly client: ClientConnection,
    status: number,
    headers: HeaderMap,
    private readonly timing: EventStreamTiming,
  ) {
    const { res } = client;
    res.status(status);
    for (const name in headers) res.setHeader(name, headers[name]);
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('x-accel-buffering', 'no');
    this.holdForThisTurn();
    res.flushHeaders();
    if (timing.keepAliveMs > 0) {
      this.keepAlives = KeepAliveSweep.every(Math.max(10, timing.keepAliveMs / 4));
      this.keepAlives.add(this);
    }
  }

  /**
   * Writes one piece: true when the client takes more, false when it has gone or was cut for not
   * reading; a promise of that only when the client's buffer is full and it waits for the client.
   */
  write(piece: string | Buffer): boolean | Promise<boolean> {
    if (piece.length === 0) return !this.client.gone;
    if (this.client.gone || this.client.res.writableEnded) return false;
    this.atEventBoundary = endsEvent(piece);
    this.lastWriteAt = Date.now();
    this.holdForThisTurn();
    if (this.client.res.write(piece)) return true;
    return waitForDrain(this.client.res, this.timing.idleTimeoutMs).then((outcome) => {
      if (outcome === 'timeout') this.client.cut();
      return outcome === 'drained' && !this.client.gone;
    });
  }

  end(last?: string | Buffer): void {
    this.stop();
    if (this.client.res.writableEnded || this.client.res.destroyed) return;
    if (last !== undefined && last.length > 0) this.client.res.end(last);
    else this.client.res.end();
  }

  stop(): void {
    this.keepAlives?.delete(this);
  }

  /** Corks the response until the current turn's other writes are done (ending it sends at once). */
  private holdForThisTurn(): void {
    if (this.corked) return;
    this.corked = true;
    const { res } = this.client;
    res.cork();
    setImmediate(() => {
      this.corked = false;
      if (!res.writableEnded) res.uncork();
    });
  }

  /** Sends a comment when the stream has been quiet for the keep-alive time; false once it is over. */
  keepAlive(now: number): boolean {
    if (this.client.gone || this.client.res.writableEnded) return false;
    if (!this.atEventBoundary || now - this.lastWriteAt < this.timing.keepAliveMs) return true;
    if (this.client.res.writableNeedDrain) return true;
    this.lastWriteAt = now;
    this.client.res.write(KEEP_ALIVE);
    return true;
  }
}

/**
 * One timer for the keep-alives of every open stream (per period), running while any is open: a timer
 * made and cleared for each stream cost a short answer's stream more than its keep-alive is worth.
 */
class KeepAliveSweep {
  private static readonly byPeriod = new Map<number, KeepAliveSweep>();
  private readonly writers = new Set<EventStreamWriter>();
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly periodMs: number) {}

  static every(periodMs: number): KeepAliveSweep {
    let sweep = KeepAliveSweep.byPeriod.get(periodMs);
    if (sweep === undefined) {
      sweep = new KeepAliveSweep(periodMs);
      KeepAliveSweep.byPeriod.set(periodMs, sweep);
    }
    return sweep;
  }

  add(writer: EventStreamWriter): void {
    this.writers.add(writer);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.periodMs);
      this.timer.unref();
    }
  }

  delete(writer: EventStreamWriter): void {
    if (!this.writers.delete(writer) || this.writers.size > 0) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private sweep(): void {
    const now = Date.now();
    for (const writer of this.writers) if (!writer.keepAlive(now)) this.delete(writer);
  }
}

/** True when the piece ends with the blank line that ends an SSE event (LF or CRLF line endings). */
function endsEvent(piece: string | Buffer): boolean {
  const tail = typeof piece === 'string' ? piece.slice(-4) : piece.subarray(-4).toString('latin1');
  return tail.endsWith('\n\n') || tail.endsWith('\r\n\r\n') || tail.endsWith('\r\r');
}

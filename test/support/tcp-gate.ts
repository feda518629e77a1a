import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

type GateMode = 'open' | 'silent' | 'refusing';

/** One client connection and its connection to the target (none yet while the gate is silent). */
interface Pair {
  client: Socket;
  target: Socket | null;
}

/**
 * A loopback TCP proxy in front of a real server (Redis, PostgreSQL) that a test can make fail:
 * `silence()` keeps accepting connections and never answers (nothing is forwarded either way, as with
 * a paused server or a black-holed network), `refuse()` cuts every connection and each new one at
 * once, `open()` forwards again (silenced connections resume where they stopped).
 */
export class TcpGate {
  private mode: GateMode = 'open';
  private readonly pairs = new Set<Pair>();

  private constructor(
    private readonly server: Server,
    private readonly targetPort: number,
    private readonly targetHost: string,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpGate> {
    const server = createServer();
    const gate = new TcpGate(server, targetPort, targetHost);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return gate;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  silence(): void {
    this.mode = 'silent';
    for (const pair of this.pairs) {
      pair.client.pause();
      pair.target?.pause();
    }
  }

  refuse(): void {
    this.mode = 'refusing';
    for (const pair of [...this.pairs]) this.cut(pair);
  }

  open(): void {
    this.mode = 'open';
    for (const pair of this.pairs) {
      if (pair.target === null) this.join(pair);
      pair.client.resume();
      pair.target?.resume();
    }
  }

  async close(): Promise<void> {
    for (const pair of [...this.pairs]) this.cut(pair);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    client.on('error', () => undefined);
    if (this.mode === 'refusing') {
      client.destroy();
      return;
    }
    const pair: Pair = { client, target: null };
    this.pairs.add(pair);
    client.on('close', () => this.cut(pair));
    if (this.mode === 'silent') client.pause();
    else this.join(pair);
  }

  private join(pair: Pair): void {
    const target = connect(this.targetPort, this.targetHost);
    target.on('error', () => undefined);
    target.on('close', () => this.cut(pair));
    pair.target = target;
    pair.client.pipe(target);
    target.pipe(pair.client);
  }

  private cut(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.destroy();
    pair.target?.destroy();
  }
}

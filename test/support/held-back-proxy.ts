import { AddressInfo, createServer, Server, Socket } from 'node:net';

/** PostgreSQL's NotificationResponse message type. */
const NOTIFICATION = 0x41; // 'A'

/**
 * A TCP proxy in front of PostgreSQL (no TLS) that can misbehave for the connections whose startup
 * message names an application: `holdBack` stops passing the server's answers on, without closing
 * anything (a stalled listener), and `deafen` drops every notification the server sends them, as a
 * transaction-pooling proxy where a LISTEN never delivers.
 */
export class HeldBackProxy {
  private readonly held = new Set<string>();
  private readonly deaf = new Set<string>();
  private readonly sockets = new Set<Socket>();
  private readonly resumes = new Set<() => void>();

  private constructor(private readonly server: Server) {}

  static async start(target: { host: string; port: number }): Promise<HeldBackProxy> {
    const server = createServer();
    const proxy = new HeldBackProxy(server);
    server.on('connection', (client: Socket) => proxy.accept(client, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** The URL of the proxy for a database URL of the target. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String((this.server.address() as AddressInfo).port);
    return url.toString();
  }

  holdBack(applicationName: string): void {
    this.held.add(applicationName);
  }

  release(applicationName: string): void {
    this.held.delete(applicationName);
    for (const resume of this.resumes) resume();
  }

  deafen(applicationName: string): void {
    this.deaf.add(applicationName);
  }

  /** Passes everything on again, for every application. */
  reset(): void {
    this.deaf.clear();
    for (const application of [...this.held]) this.release(application);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    const upstream = new Socket();
    this.sockets.add(client).add(upstream);
    let application: string | null = null;
    let pending = Buffer.alloc(0);
    let queued: Buffer[] = [];
    const flush = () => {
      if (application !== null && this.held.has(application)) return;
      for (const chunk of queued) client.write(chunk);
      queued = [];
    };
    this.resumes.add(flush);
    client.on('data', (chunk: Buffer) => {
      if (application === null) {
        // the startup message: length, protocol, then name/value pairs
        const fields = chunk.subarray(8).toString('utf8').split('\0');
        const at = fields.indexOf('application_name');
        application = at >= 0 ? fields[at + 1] : '';
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      // whole messages only: type, then a length that counts itself
      while (pending.length >= 5 && pending.length >= 1 + pending.readUInt32BE(1)) {
        const size = 1 + pending.readUInt32BE(1);
        const message = pending.subarray(0, size);
        pending = pending.subarray(size);
        if (message[0] === NOTIFICATION && application !== null && this.deaf.has(application)) continue;
        queued.push(Buffer.from(message));
      }
      flush();
    });
    const end = () => {
      this.resumes.delete(flush);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.connect(target.port, target.host);
  }
}

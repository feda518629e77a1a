import { INestApplication, Logger } from '@nestjs/common';
import type { Server, ServerResponse } from 'node:http';

/** After the grace period, how long closing the application (hooks, database) may still take. */
export const CLOSE_TIMEOUT_MS = 15_000;

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/**
 * What the process does on SIGTERM (or SIGINT):
 * 1. stop accepting connections; idle keep-alive connections are closed, busy ones close after their
 *    response (`Connection: close`);
 * 2. let in-flight requests and streams finish, for at most `graceMs`, then cut what is left;
 * 3. close the application: the extraction worker stops (unfinished messages stay pending for the next
 *    sweep), work after responses drains, then the upstream clients and the database close;
 * 4. exit 0. If closing hangs past CLOSE_TIMEOUT_MS, or a second signal arrives, exit 1 at once.
 */
export class GracefulShutdown {
  private readonly logger = new Logger('Shutdown');
  private readonly inFlight = new Set<ServerResponse>();
  private draining = false;

  constructor(
    private readonly app: INestApplication,
    private readonly graceMs: number,
    private readonly exit: (code: number) => void = (code) => process.exit(code),
  ) {}

  /** Call before `listen`, so that every request is tracked. */
  install(): void {
    const server = this.server();
    server.on('request', (_req, res: ServerResponse) => {
      this.inFlight.add(res);
      // a request the application answered at once has its headers out already
      if (this.draining && !res.headersSent) res.setHeader('Connection', 'close');
      res.once('close', () => {
        this.inFlight.delete(res);
        if (this.draining) server.closeIdleConnections();
      });
    });
    for (const signal of SIGNALS) process.once(signal, () => void this.shutdown(signal));
  }

  private server(): Server {
    return this.app.getHttpServer() as Server;
  }

  private async shutdown(signal: NodeJS.Signals): Promise<void> {
    for (const other of SIGNALS) {
      process.once(other, () => {
        this.logger.warn(`${other} during shutdown: exiting now`);
        this.exit(1);
      });
    }
    this.logger.log(`${signal}: stopping; ${this.inFlight.size} request(s) in flight`);
    const hardStop = setTimeout(() => {
      this.logger.error('shutdown did not finish in time: exiting');
      this.exit(1);
    }, this.graceMs + CLOSE_TIMEOUT_MS);
    hardStop.unref();
    try {
      await this.drainRequests();
      await this.app.close();
      clearTimeout(hardStop);
      this.logger.log('stopped');
      this.exit(0);
    } catch (error) {
      clearTimeout(hardStop);
      this.logger.error(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
      this.exit(1);
    }
  }

  private async drainRequests(): Promise<void> {
    const server = this.server();
    this.draining = true;
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), this.graceMs);
    });
    const timedOut = await Promise.race([closed.then(() => false), graceOver]);
    clearTimeout(timer);
    if (timedOut) {
      this.logger.warn(`grace period of ${this.graceMs} ms over: cutting ${this.inFlight.size} request(s)`);
      server.closeAllConnections();
      await closed;
    }
  }
}

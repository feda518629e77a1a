import { createServer } from 'node:net';

/** Ports below Linux's ephemeral range (32768 and up by default), from which listen(0) and connect() draw. */
const CHOSEN_PORTS = { from: 20_000, to: 32_767 };

/**
 * A port that nothing listens on now, for a child process to listen on once it has booted, which can
 * take a minute on a busy machine. It is chosen below the ephemeral range: a port from that range, once
 * let go, could be taken meanwhile by any server that listens on port 0, which would then answer the
 * child's /health in its place.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = CHOSEN_PORTS.from + Math.floor(Math.random() * (CHOSEN_PORTS.to - CHOSEN_PORTS.from + 1));
    if (await canListen(port)) return port;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    // on every address, as a child with HOST=0.0.0.0 listens
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

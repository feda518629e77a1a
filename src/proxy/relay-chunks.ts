import { finished, type Readable } from 'node:stream';

/**
 * Hands each chunk of `body` to `relay` as it arrives, pausing the body while a chunk waits for the
 * client: true once the body ended, false as soon as `relay` says the client takes no more (the body is
 * then left to the caller); rejects when the body fails or `relay` throws. Events rather than an async iterator, whose
 * promises per chunk and set-up cost a short stream more than relaying it.
 */
export function relayChunks(
  body: Readable,
  relay: (chunk: Buffer) => boolean | Promise<boolean>,
): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error: Error | null | undefined, ended: boolean) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      // a body left flowing would read on into nobody
      if (!ended) body.pause();
      if (error) reject(error);
      else resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      if (settled) return;
      let taken: boolean | Promise<boolean>;
      try {
        taken = relay(chunk);
      } catch (error) {
        // thrown here it would reach whatever pushed the chunk into the body
        return settle(asError(error), false);
      }
      if (taken === true) return;
      if (taken === false) return settle(null, false);
      body.pause();
      taken.then(
        (more) => {
          if (!more) settle(null, false);
          else if (!settled) body.resume();
        },
        (error: unknown) => settle(asError(error), false),
      );
    };
    body.on('data', onData);
    finished(body, (error) => settle(error, true));
  });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

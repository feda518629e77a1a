import type { Request, Response } from 'express';
import { EventEmitter } from 'node:events';
import { ClientConnection, ClientGoneError } from './client-connection';

/** A request and response as far as ClientConnection reads them. */
function exchange(): { req: Request; res: Response & EventEmitter } {
  const res = Object.assign(new EventEmitter(), {
    writableFinished: false,
    destroyed: false,
    destroy() {
      res.destroyed = true;
      res.emit('close');
    },
  });
  const req = { socket: { destroyed: false } };
  return { req: req as unknown as Request, res: res as unknown as Response & EventEmitter };
}

describe('ClientConnection', () => {
  it('cancels the upstream call when the client leaves before the answer is complete', () => {
    const { req, res } = exchange();
    const client = new ClientConnection(req, res);
    const heard: unknown[] = [];
    client.cancellation.once('abort', () => heard.push(client.cancellation.reason));
    expect(client.gone).toBe(false);
    res.emit('close');
    expect(client.gone).toBe(true);
    expect(heard).toEqual([expect.any(ClientGoneError)]);
    // asked for afterwards, the signal is already aborted, with the same reason
    expect(client.signal.aborted).toBe(true);
    expect(client.signal.reason).toBe(heard[0]);
  });

  it('aborts a signal asked for earlier, and only once however often it is cut', () => {
    const { req, res } = exchange();
    const client = new ClientConnection(req, res);
    const signal = client.signal;
    let aborts = 0;
    client.cancellation.on('abort', () => aborts++);
    client.cut();
    client.cut();
    expect(res.destroyed).toBe(true);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(ClientGoneError);
    expect(aborts).toBe(1);
  });

  it('is not gone when the connection closes after the answer was sent', () => {
    const { req, res } = exchange();
    const client = new ClientConnection(req, res);
    (res as unknown as { writableFinished: boolean }).writableFinished = true;
    res.emit('close');
    expect(client.gone).toBe(false);
    expect(client.signal.aborted).toBe(false);
  });
});

import { PassThrough, Readable } from 'node:stream';
import { relayChunks } from './relay-chunks';

describe('relayChunks', () => {
  it('hands on every chunk in order and resolves true once the body ended', async () => {
    const seen: string[] = [];
    const ended = await relayChunks(
      Readable.from([Buffer.from('a'), Buffer.from('b'), Buffer.from('c')]),
      (chunk) => {
        seen.push(chunk.toString());
        return true;
      },
    );
    expect({ ended, seen }).toEqual({ ended: true, seen: ['a', 'b', 'c'] });
  });

  it('stops at the first chunk the relay refuses, and leaves the body to the caller', async () => {
    const body = Readable.from([Buffer.from('a'), Buffer.from('b'), Buffer.from('c')]);
    const seen: string[] = [];
    const ended = await relayChunks(body, (chunk) => {
      seen.push(chunk.toString());
      return chunk.toString() !== 'b';
    });
    expect({ ended, seen, destroyed: body.destroyed }).toEqual({
      ended: false,
      seen: ['a', 'b'],
      destroyed: false,
    });
    body.destroy();
  });

  it('pauses the body while a chunk waits, then goes on or stops as the wait ends', async () => {
    const body = new PassThrough();
    let release: (more: boolean) => void = () => {};
    const seen: string[] = [];
    const relayed = relayChunks(body, (chunk) => {
      seen.push(chunk.toString());
      return chunk.toString() === 'wait' ? new Promise<boolean>((resolve) => (release = resolve)) : true;
    });
    body.write('wait');
    body.write('next');
    await new Promise((resolve) => setImmediate(resolve));
    expect({ seen, paused: body.isPaused() }).toEqual({ seen: ['wait'], paused: true });
    release(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['wait', 'next']);
    body.end();
    await expect(relayed).resolves.toBe(true);

    const cut = new PassThrough();
    const stopped = relayChunks(cut, () => Promise.resolve(false));
    cut.write('x');
    await expect(stopped).resolves.toBe(false);
    cut.destroy();
  });

  it("rejects with what the relay threw, or the body's error, instead of throwing into the stream", async () => {
    const body = new PassThrough();
    const failing = relayChunks(body, () => {
      throw new Error('translation failed');
    });
    body.write('x');
    await expect(failing).rejects.toThrow('translation failed');
    body.destroy();

    const broken = new PassThrough();
    const relayed = relayChunks(broken, () => true);
    broken.destroy(new Error('upstream reset'));
    await expect(relayed).rejects.toThrow('upstream reset');
  });
});

import { PassThrough, Readable } from 'node:stream';
import { ApiError } from '../common/api-error';
import { readWhole } from './upstream-caller';

describe('readWhole: an upstream answer read whole', () => {
  it('joins the chunks of a body that ends', async () => {
    const body = Readable.from([Buffer.from('{"a":'), Buffer.from('1'), Buffer.from('}')], {
      objectMode: false,
    });
    expect((await readWhole(body, 100)).toString()).toBe('{"a":1}');
  });

  it('reads an empty body as no bytes', async () => {
    expect(await readWhole(Readable.from([], { objectMode: false }), 100)).toEqual(Buffer.alloc(0));
  });

  it('refuses a body past the limit with upstream_invalid_response, and destroys it', async () => {
    const body = new PassThrough();
    const read = readWhole(body, 10);
    body.write(Buffer.alloc(6));
    body.write(Buffer.alloc(6));
    await expect(read).rejects.toMatchObject({ status: 502, code: 'upstream_invalid_response' });
    await expect(read).rejects.toBeInstanceOf(ApiError);
    expect(body.destroyed).toBe(true);
  });

  it('rejects a body that errors, or closes before its end, instead of answering with part of it', async () => {
    const failing = new PassThrough();
    const failed = readWhole(failing, 100);
    failing.write('{"partial": ');
    failing.destroy(new Error('socket hang up'));
    await expect(failed).rejects.toThrow('socket hang up');

    const cut = new PassThrough();
    const closed = readWhole(cut, 100);
    cut.write('{"partial": ');
    cut.destroy();
    await expect(closed).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});

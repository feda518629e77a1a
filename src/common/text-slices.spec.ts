import { once } from 'node:events';
import { AddressInfo, connect, createServer, Socket } from 'node:net';
import { turnsWhile } from '../../test/support/event-loop';
import { ChunkedUtf8Text, jsonBytes, nextTask, TEXT_SLICE } from './text-slices';

/** A long text with quotes, escapes, control characters and surrogate pairs across the slices' ends. */
function awkwardText(length: number): string {
  const pattern = 'a"b\\c\n\u0001é😀 ';
  return pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length);
}

describe('jsonBytes', () => {
  it('gives the bytes of JSON.stringify for short values, at once', async () => {
    const value = { model: 'm', messages: [{ role: 'user', content: 'Hi "you" 😀 \ud800' }], n: 1.5 };
    expect((await jsonBytes(value)).equals(Buffer.from(JSON.stringify(value)))).toBe(true);
  });

  it('gives the bytes of JSON.stringify for long strings anywhere in the value, surrogates included', async () => {
    for (const shift of [0, 1, 2]) {
      const long = `${'x'.repeat(shift)}${awkwardText(3 * TEXT_SLICE + 7)}\ud83d`;
      const value = {
        model: 'm',
        messages: [
          { role: 'system', content: 'short' },
          { role: 'user', content: long },
          { role: 'user', content: [{ type: 'text', text: long.slice(5) }] },
        ],
        'key "quoted"': long.slice(0, TEXT_SLICE + 1),
      };
      const bytes = await jsonBytes(value);
      expect(bytes.equals(Buffer.from(JSON.stringify(value)))).toBe(true);
    }
    const alone = awkwardText(TEXT_SLICE * 2);
    expect((await jsonBytes(alone)).equals(Buffer.from(JSON.stringify(alone)))).toBe(true);
  });

  it('does not mistake a string equal to another value for a long one', async () => {
    const long = 'y'.repeat(TEXT_SLICE + 1);
    const value = { a: long, b: 'long-text-x', c: [long, 'z'] };
    expect((await jsonBytes(value)).equals(Buffer.from(JSON.stringify(value)))).toBe(true);
  });

  it('lets the event loop turn while it serialises a long string', async () => {
    const { value, turns } = await turnsWhile(jsonBytes({ content: 'z'.repeat(8 * TEXT_SLICE) }));
    expect(value.length).toBe(8 * TEXT_SLICE + 14);
    // a slice per turn at most: escaping and encoding each of the 8 slices are turns of their own
    expect(turns).toBeGreaterThanOrEqual(8);
  });
});

describe('ChunkedUtf8Text', () => {
  const decode = (bytes: Buffer, chunkSize: number) => {
    const text = new ChunkedUtf8Text();
    for (let i = 0; i < bytes.length; i += chunkSize) text.add(bytes.subarray(i, i + chunkSize));
    return { text: text.text(), long: text.long };
  };

  it('decodes as Buffer.toString does, whatever the chunks, multi-byte characters across them', () => {
    const bytes = Buffer.from(`\ufeff${awkwardText(TEXT_SLICE + 1000)}`);
    for (const chunkSize of [1000, 65_536, 65_537, bytes.length]) {
      expect(decode(bytes, chunkSize)).toEqual({ text: bytes.toString('utf8'), long: true });
    }
    const short = Buffer.from('{"a":"é😀"}');
    expect(decode(short, 3)).toEqual({ text: short.toString('utf8'), long: false });
  });

  it('replaces invalid bytes with U+FFFD, as Buffer.toString does', () => {
    const bytes = Buffer.concat([Buffer.from('a'.repeat(TEXT_SLICE)), Buffer.from([0xff, 0x41, 0xe2, 0x82])]);
    expect(decode(bytes, 4096).text).toBe(bytes.toString('utf8'));
  });
});

describe('nextTask', () => {
  it('resolves after the I/O that is ready has been read, even when asked for from an I/O callback', async () => {
    const order: string[] = [];
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const [peer] = (await once(server, 'connection')) as [Socket];
    let seen = 0;
    await new Promise<void>((resolve) => {
      peer.on('data', () => {
        if (++seen > 1) return void order.push('later I/O');
        // as a body's last chunk arrives: the next chunk is already there, a single setImmediate
        // would run before it is read
        void nextTask().then(() => {
          order.push('next task');
          resolve();
        });
        client.write('second');
      });
      client.write('first');
    });
    client.destroy();
    peer.destroy();
    server.close();
    expect(order).toEqual(['later I/O', 'next task']);
  });
});

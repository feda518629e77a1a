/**
 * The text of a (non-streamed) upstream answer, cut off at `maxBytes`: a body that large is not an
 * answer the caller can use, and the rest is not read (the connection is dropped).
 */
export async function readTextUpTo(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  maxBytes: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

import { readVectors } from './embeddings-client';

const answer = (data: unknown) => JSON.stringify({ object: 'list', data });

describe('readVectors', () => {
  it('returns the vectors in input order, whatever order the items come in', () => {
    const text = answer([
      { index: 1, embedding: [0, 1] },
      { index: 0, embedding: [1, 0] },
    ]);
    expect(readVectors(text, 2)).toEqual({
      kind: 'vectors',
      vectors: [
        [1, 0],
        [0, 1],
      ],
    });
  });

  it('reads base64 float32 vectors (what some providers send regardless of encoding_format)', () => {
    const base64 = Buffer.from(new Float32Array([0.5, -0.25]).buffer).toString('base64');
    expect(readVectors(answer([{ index: 0, embedding: base64 }]), 1)).toEqual({
      kind: 'vectors',
      vectors: [[0.5, -0.25]],
    });
  });

  it.each([
    ['not JSON', '<html>'],
    ['no data', JSON.stringify({ object: 'list' })],
    ['fewer vectors than inputs', answer([{ index: 0, embedding: [1] }])],
    [
      'an index twice',
      answer([
        { index: 0, embedding: [1] },
        { index: 0, embedding: [1] },
      ]),
    ],
    [
      'an index out of range',
      answer([
        { index: 0, embedding: [1] },
        { index: 5, embedding: [1] },
      ]),
    ],
    [
      'a non-number',
      answer([
        { index: 0, embedding: [1, 'x'] },
        { index: 1, embedding: [1, 2] },
      ]),
    ],
    [
      'an empty vector',
      answer([
        { index: 0, embedding: [] },
        { index: 1, embedding: [1] },
      ]),
    ],
    [
      'the zero vector',
      answer([
        { index: 0, embedding: [0, 0] },
        { index: 1, embedding: [1, 2] },
      ]),
    ],
    [
      'sizes that differ',
      answer([
        { index: 0, embedding: [1] },
        { index: 1, embedding: [1, 2] },
      ]),
    ],
    [
      'base64 of a partial float',
      answer([
        { index: 0, embedding: 'AAA=' },
        { index: 1, embedding: [1] },
      ]),
    ],
  ])('refuses an answer with %s', (_, text) => {
    expect(readVectors(text, 2).kind).toBe('failed');
  });

  it('refuses a vector larger than pgvector can hold', () => {
    const huge = new Array<number>(16_001).fill(0.1);
    expect(readVectors(answer([{ index: 0, embedding: huge }]), 1).kind).toBe('failed');
  });
});

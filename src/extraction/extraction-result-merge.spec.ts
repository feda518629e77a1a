import { DEFAULT_TRAIT_SCHEMAS } from '../traits/default-trait-schemas';
import { mergeExtractionResults } from './extraction-result-merge';

describe('mergeExtractionResults', () => {
  it('collects list items, keeps the most confident (then latest) single value, de-duplicates memories', () => {
    const merged = mergeExtractionResults(
      [
        {
          traits: [
            { key: 'interests', value: ['hiking'], confidence: 0.6 },
            { key: 'name', value: 'Anna', confidence: 0.9 },
            { key: 'timezone', value: 'Berlin', confidence: 0.8 },
          ],
          memories: [{ content: 'Has two kids.', type: 'fact', importance: 0.5 }],
        },
        {
          traits: [
            { key: 'interests', value: ['Hiking', 'jazz'], confidence: 0.7 },
            { key: 'name', value: 'Ann', confidence: 0.6 },
            { key: 'timezone', value: 'Rome', confidence: 0.8 },
          ],
          memories: [
            { content: 'has two kids', type: 'fact', importance: 0.9 },
            { content: 'Works at Acme.', type: 'fact', importance: 0.4 },
          ],
        },
      ],
      DEFAULT_TRAIT_SCHEMAS,
    );
    expect(merged.traits).toEqual([
      { key: 'interests', value: ['hiking', 'jazz'], confidence: 0.7 },
      { key: 'name', value: 'Anna', confidence: 0.9 },
      { key: 'timezone', value: 'Rome', confidence: 0.8 },
    ]);
    expect(merged.memories).toEqual([
      { content: 'Has two kids.', type: 'fact', importance: 0.9 },
      { content: 'Works at Acme.', type: 'fact', importance: 0.4 },
    ]);
  });

  it('returns an empty result for no pieces', () => {
    expect(mergeExtractionResults([], DEFAULT_TRAIT_SCHEMAS)).toEqual({ traits: [], memories: [] });
  });
});

import type { HeldMemoryRow } from '../../src/memories/held-memory-candidates';

/** A held statement's memory row: a fact created at the start of 2026, its words its lowercased words. */
export function heldMemoryRow(id: string, content: string, version = '1'): HeldMemoryRow {
  return {
    id,
    version,
    content,
    type: 'fact',
    importance: 0.5,
    decay_factor: 1,
    created_at: '2026-01-01T00:00:00.000000+00:00',
    last_accessed_at: null,
    created_us: '1767225600000000',
    superseded: false,
    lexemes: content.toLowerCase().split(' '),
  };
}

/** Emitted after memories were committed (not for repeats of stored ones). */
export const MEMORIES_STORED = 'memories.stored';

export interface MemoriesStoredEvent {
  profileId: string;
  memoryIds: string[];
}

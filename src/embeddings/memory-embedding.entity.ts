import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * The embedding of one memory by one model (semantic ranking). Written and read with SQL by the
 * embeddings module; a memory's row goes with the memory.
 */
@Entity({ name: 'memory_embeddings' })
export class MemoryEmbeddingEntity {
  @PrimaryColumn({ name: 'memory_id', type: 'uuid' })
  memoryId: string;

  @Column({ name: 'profile_id', type: 'uuid' })
  profileId: string;

  @Column({ type: 'text' })
  model: string;

  /** Null when the provider refused to embed this memory (`error` says why); it is not asked again. */
  @Column({ type: 'real', array: true, nullable: true })
  embedding: number[] | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** Set while a process embeds the memory (no vector and no error yet): others leave it alone. */
  @Column({ name: 'claimed_until', type: 'timestamptz', nullable: true })
  claimedUntil: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

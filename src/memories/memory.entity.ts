import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';

export const MEMORY_TYPES = ['fact', 'preference', 'event', 'context'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

@Entity({ name: 'memories' })
@Unique('memories_profile_content_unique', ['profileId', 'contentHash'])
export class MemoryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'profile_id', type: 'uuid' })
  profileId: string;

  @Column({ type: 'text' })
  content: string;

  /** Hash of the normalised content: one row per distinct memory within a profile. */
  @Column({ name: 'content_hash', type: 'text' })
  contentHash: string;

  @Column({ type: 'text' })
  type: MemoryType;

  @Column({ type: 'real' })
  importance: number;

  @Column({ name: 'decay_factor', type: 'real', default: 1 })
  decayFactor: number;

  @Column({ name: 'source_message_ids', type: 'uuid', array: true, default: () => "'{}'" })
  sourceMessageIds: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_accessed_at', type: 'timestamptz', nullable: true })
  lastAccessedAt: Date | null;

  /** The newer memory that replaced this one (null when none did, or it was deleted since). */
  @Column({ name: 'superseded_by', type: 'uuid', nullable: true })
  supersededBy: string | null;

  /** When a newer memory replaced this one: from then on it is kept but never injected. */
  @Column({ name: 'superseded_at', type: 'timestamptz', nullable: true })
  supersededAt: Date | null;

  /** When it was last said again (reinforced). */
  @Column({ name: 'confirmed_at', type: 'timestamptz', nullable: true })
  confirmedAt: Date | null;

  /** The kind of single-valued fact it states (`location`, `employer`, ...): a newer one supersedes it. */
  @Column({ name: 'fact_key', type: 'text', nullable: true })
  factKey: string | null;
}

import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'messages' })
export class MessageEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Insertion order; messages of one turn share a timestamp. */
  @Column({ type: 'bigint', insert: false, update: false })
  seq: string;

  @Column({ name: 'profile_id', type: 'uuid' })
  profileId: string;

  @Column({ type: 'text' })
  role: string;

  @Column({ type: 'text' })
  content: string;

  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId: string | null;

  @Column({ type: 'text', nullable: true })
  model: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Null until extraction has consumed the message: the durable to-do list of background extraction. */
  @Column({ name: 'extracted_at', type: 'timestamptz', nullable: true })
  extractedAt: Date | null;

  @Column({ name: 'extraction_attempts', type: 'integer', default: 0 })
  extractionAttempts: number;

  @Column({ name: 'extraction_error', type: 'text', nullable: true })
  extractionError: string | null;

  /** When the message's last failed extraction happened (with `extractionError`). */
  @Column({ name: 'extraction_failed_at', type: 'timestamptz', nullable: true })
  extractionFailedAt: Date | null;

  /** The rules learnt the message after the LLM's last failed try (its error is kept). */
  @Column({ name: 'extraction_fell_back', type: 'boolean', default: false })
  extractionFellBack: boolean;

  /** The per-request trait schemas of the turn (RequestTraitSchema[]), or null. */
  @Column({ name: 'trait_overrides', type: 'jsonb', nullable: true })
  traitOverrides: unknown[] | null;
}

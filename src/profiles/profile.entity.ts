import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'profiles' })
export class ProfileEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'external_id', type: 'text', nullable: true, unique: true })
  externalId: string | null;

  @Column({ type: 'text', default: '' })
  summary: string;

  @Column({ name: 'summary_version', type: 'integer', default: 0 })
  summaryVersion: number;

  @Column({ name: 'summary_updated_at', type: 'timestamptz', nullable: true })
  summaryUpdatedAt: Date | null;

  /** A summary written through the API; automatic summaries leave it alone until it is cleared. */
  @Column({ name: 'summary_is_manual', type: 'boolean', default: false })
  summaryIsManual: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

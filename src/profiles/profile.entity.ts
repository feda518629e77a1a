import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'profiles' })
export class ProfileEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The application that owns the profile: the external id is unique within it. */
  @Column({ name: 'application_id', type: 'uuid' })
  applicationId: string;

  @Column({ name: 'external_id', type: 'text', nullable: true })
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

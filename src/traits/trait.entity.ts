import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, Unique, UpdateDateColumn } from 'typeorm';

export type TraitSource = 'extracted' | 'manual';

@Entity({ name: 'traits' })
@Unique('traits_profile_key_unique', ['profileId', 'key'])
export class TraitEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'profile_id', type: 'uuid' })
  profileId: string;

  @Column({ type: 'text' })
  key: string;

  @Column({ type: 'jsonb' })
  value: unknown;

  @Column({ name: 'value_type', type: 'text' })
  valueType: string;

  @Column({ type: 'text' })
  category: string;

  @Column({ type: 'real' })
  confidence: number;

  @Column({ type: 'text' })
  source: TraitSource;

  @Column({ name: 'source_message_ids', type: 'uuid', array: true, default: () => "'{}'" })
  sourceMessageIds: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

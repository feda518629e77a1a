import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Up to when a memory's unused days have been counted into its decay_factor (null: none yet, count from
 * created_at). It makes the daily decay job idempotent and lets it catch up missed days.
 */
export class MemoryDecayProgress1763900000000 implements MigrationInterface {
  name = 'MemoryDecayProgress1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE memories ADD COLUMN decay_counted_until timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE memories DROP COLUMN decay_counted_until`);
  }
}

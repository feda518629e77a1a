import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a profile's learning went through: `extraction_failed_at` is when the message's last failed
 * extraction happened (with `extraction_error`), and `extraction_fell_back` says that the rules learnt
 * it after the LLM's last failed try (it keeps the LLM's error). The partial index serves the profile's
 * learning state, which counts and reads only messages with an error.
 */
export class ExtractionFallback1765200000000 implements MigrationInterface {
  name = 'ExtractionFallback1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE messages
         ADD COLUMN extraction_failed_at timestamptz,
         ADD COLUMN extraction_fell_back boolean NOT NULL DEFAULT false`,
    );
    await queryRunner.query(
      `CREATE INDEX messages_extraction_error_idx ON messages (profile_id, extraction_failed_at)
       WHERE extraction_error IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX messages_extraction_error_idx`);
    await queryRunner.query(
      `ALTER TABLE messages DROP COLUMN extraction_fell_back, DROP COLUMN extraction_failed_at`,
    );
  }
}

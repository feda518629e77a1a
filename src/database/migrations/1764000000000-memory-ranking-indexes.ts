import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes that keep building a chat context fast as profiles and the table grow (measured at 100,000
 * memories in one profile and 1,000,000 in the table): full text is searched within one profile
 * (a GIN index on (profile_id, search_vector), which needs btree_gin) instead of across every profile,
 * and the most important memories of a profile come from an index instead of a sort.
 */
export class MemoryRankingIndexes1764000000000 implements MigrationInterface {
  name = 'MemoryRankingIndexes1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS btree_gin`);
    await queryRunner.query(
      `CREATE INDEX memories_profile_search_idx ON memories USING gin (profile_id, search_vector)`,
    );
    await queryRunner.query(`DROP INDEX memories_search_idx`);
    await queryRunner.query(
      `CREATE INDEX memories_profile_weight_idx ON memories (profile_id, (importance * decay_factor) DESC, created_at DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX memories_profile_weight_idx`);
    await queryRunner.query(`CREATE INDEX memories_search_idx ON memories USING gin (search_vector)`);
    await queryRunner.query(`DROP INDEX memories_profile_search_idx`);
  }
}

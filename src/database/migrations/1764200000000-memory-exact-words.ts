import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The full-text vector of a memory keeps each word as written (the 'simple' configuration) beside its
 * English stem, so that a question can still find names and rare words the English configuration
 * drops or merges: a name that is a stop word ("Will", "Don", "US"), or a rare word that shares its stem
 * with a common one ("organization" and "organ"). Rewrites the table (a generated column's expression
 * cannot be altered in place).
 */
export class MemoryExactWords1764200000000 implements MigrationInterface {
  name = 'MemoryExactWords1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await this.replaceSearchVector(
      queryRunner,
      `to_tsvector('english'::regconfig, content) || to_tsvector('simple'::regconfig, content)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await this.replaceSearchVector(queryRunner, `to_tsvector('english'::regconfig, content)`);
  }

  private async replaceSearchVector(queryRunner: QueryRunner, expression: string): Promise<void> {
    await queryRunner.query(`ALTER TABLE memories DROP COLUMN search_vector`); // drops its index too
    await queryRunner.query(
      `ALTER TABLE memories ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (${expression}) STORED`,
    );
    await queryRunner.query(
      `CREATE INDEX memories_profile_search_idx ON memories USING gin (profile_id, search_vector)`,
    );
  }
}

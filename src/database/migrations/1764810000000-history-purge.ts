import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The history's `purged` change (a memory or trait deleted with `?purge=true`: its entries lose their
 * values, one entry says that it existed, when and by whom) and the `mcp` source (a change made through
 * the MCP tools).
 */
export class HistoryPurge1764810000000 implements MigrationInterface {
  name = 'HistoryPurge1764810000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE profile_history
      DROP CONSTRAINT profile_history_change_check,
      ADD CONSTRAINT profile_history_change_check
        CHECK (change IN ('created', 'updated', 'superseded', 'reinforced', 'deleted', 'reverted', 'purged')),
      DROP CONSTRAINT profile_history_source_check,
      ADD CONSTRAINT profile_history_source_check CHECK (source IN ('api', 'extraction', 'ingest', 'mcp'))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM profile_history WHERE change = 'purged'`);
    await queryRunner.query(`UPDATE profile_history SET source = 'api' WHERE source = 'mcp'`);
    await queryRunner.query(`ALTER TABLE profile_history
      DROP CONSTRAINT profile_history_change_check,
      ADD CONSTRAINT profile_history_change_check
        CHECK (change IN ('created', 'updated', 'superseded', 'reinforced', 'deleted', 'reverted')),
      DROP CONSTRAINT profile_history_source_check,
      ADD CONSTRAINT profile_history_source_check CHECK (source IN ('api', 'extraction', 'ingest'))`);
  }
}

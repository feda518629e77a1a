import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the proxy injected for a turn, kept with the turn's messages: `{"traits": [keys], "memories":
 * [ids]}`, so that an operator can see why the model answered as it did. Null for turns stored before
 * it was recorded.
 */
export class TurnInjectedContext1767000000000 implements MigrationInterface {
  name = 'TurnInjectedContext1767000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages ADD COLUMN injected jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE messages DROP COLUMN injected`);
  }
}

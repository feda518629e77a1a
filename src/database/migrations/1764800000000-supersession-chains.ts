import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A superseded memory always names the memory that superseded it. Deleting a memory that superseded
 * others used to empty their `superseded_by` (ON DELETE SET NULL) and leave them superseded by nothing:
 * the service now hands them on (MemoriesService.delete) and the foreign key refuses a deletion that
 * would orphan them. Memories orphaned before are repaired: superseded by the current memory of their
 * kind when there is one, else current again (the newest of a kind; older ones superseded by it).
 */
export class SupersessionChains1764800000000 implements MigrationInterface {
  name = 'SupersessionChains1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`UPDATE memories SET superseded_at = now()
      WHERE superseded_by IS NOT NULL AND superseded_at IS NULL`);
    await queryRunner.query(`UPDATE memories o SET superseded_by = c.id
      FROM memories c
      WHERE o.superseded_by IS NULL AND o.superseded_at IS NOT NULL AND o.fact_key IS NOT NULL
        AND c.profile_id = o.profile_id AND c.fact_key = o.fact_key AND c.superseded_at IS NULL`);
    await queryRunner.query(`UPDATE memories SET superseded_at = NULL
      WHERE superseded_by IS NULL AND superseded_at IS NOT NULL`);
    await queryRunner.query(`UPDATE memories o SET superseded_by = n.id, superseded_at = now()
      FROM (SELECT DISTINCT ON (profile_id, fact_key) id, profile_id, fact_key FROM memories
            WHERE fact_key IS NOT NULL AND superseded_at IS NULL
            ORDER BY profile_id, fact_key, created_at DESC, id DESC) AS n
      WHERE o.profile_id = n.profile_id AND o.fact_key = n.fact_key AND o.superseded_at IS NULL
        AND o.id <> n.id`);
    await queryRunner.query(`ALTER TABLE memories
      DROP CONSTRAINT memories_superseded_by_fkey,
      ADD CONSTRAINT memories_superseded_by_fkey FOREIGN KEY (superseded_by) REFERENCES memories (id),
      ADD CONSTRAINT memories_superseded_by_with_at
        CHECK ((superseded_by IS NULL) = (superseded_at IS NULL))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE memories
      DROP CONSTRAINT memories_superseded_by_with_at,
      DROP CONSTRAINT memories_superseded_by_fkey,
      ADD CONSTRAINT memories_superseded_by_fkey FOREIGN KEY (superseded_by) REFERENCES memories (id)
        ON DELETE SET NULL`);
  }
}

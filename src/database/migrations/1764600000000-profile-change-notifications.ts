import { MigrationInterface, QueryRunner } from 'typeorm';
import { PROFILE_CHANGES_CHANNEL } from '../profile-changes-channel';

/**
 * Every committed change of a profile's row, traits or memories sends the profile's id on
 * PROFILE_CHANGES_CHANNEL, whatever made it (the API, extraction, decay, touches, a statement run by
 * hand): a replica that holds the profile's context drops it (ProfileChangeFeed). PostgreSQL sends a
 * transaction's notifications when it commits, and one per profile however many rows changed.
 */
export class ProfileChangeNotifications1764600000000 implements MigrationInterface {
  name = 'ProfileChangeNotifications1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION notify_profile_change() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('${PROFILE_CHANGES_CHANNEL}', OLD.id::text); END IF;
         IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('${PROFILE_CHANGES_CHANNEL}', NEW.id::text); END IF;
         RETURN NULL;
       END $$`,
    );
    await queryRunner.query(
      `CREATE FUNCTION notify_profile_rows_change() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('${PROFILE_CHANGES_CHANNEL}', OLD.profile_id::text); END IF;
         IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('${PROFILE_CHANGES_CHANNEL}', NEW.profile_id::text); END IF;
         RETURN NULL;
       END $$`,
    );
    await queryRunner.query(
      `CREATE TRIGGER profiles_notify_change AFTER INSERT OR UPDATE OR DELETE ON profiles
       FOR EACH ROW EXECUTE FUNCTION notify_profile_change()`,
    );
    for (const table of ['traits', 'memories']) {
      await queryRunner.query(
        `CREATE TRIGGER ${table}_notify_change AFTER INSERT OR UPDATE OR DELETE ON ${table}
         FOR EACH ROW EXECUTE FUNCTION notify_profile_rows_change()`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['profiles', 'traits', 'memories']) {
      await queryRunner.query(`DROP TRIGGER ${table}_notify_change ON ${table}`);
    }
    await queryRunner.query(`DROP FUNCTION notify_profile_rows_change()`);
    await queryRunner.query(`DROP FUNCTION notify_profile_change()`);
  }
}

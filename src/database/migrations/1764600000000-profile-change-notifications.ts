import { MigrationInterface, QueryRunner } from 'typeorm';
import { EVERY_PROFILE, PROFILE_CHANGES_CHANNEL } from '../profile-changes-channel';

/** A statement that changes more profiles than this sends one notification for all (EVERY_PROFILE). */
const PROFILES_NAMED_PER_STATEMENT = 1000;
const TABLES = [
  { table: 'profiles', column: 'id' },
  { table: 'traits', column: 'profile_id' },
  { table: 'memories', column: 'profile_id' },
];
const EVENTS = [
  { event: 'INSERT', rows: 'NEW' },
  // a profile's rows never move to another profile: the new rows name every profile concerned
  { event: 'UPDATE', rows: 'NEW' },
  { event: 'DELETE', rows: 'OLD' },
];

/**
 * Every committed change of a profile's row, traits or memories sends the profile's id on
 * PROFILE_CHANGES_CHANNEL, whatever made it (the API, extraction, decay, touches, a statement run by
 * hand): a replica that holds the profile's context stops trusting it (ProfileChangeFeed). The
 * triggers run once per statement over its changed rows; a statement that changes many profiles (the
 * daily decay) sends EVERY_PROFILE instead of naming them all. PostgreSQL delivers a transaction's
 * notifications when it commits, each distinct one once.
 */
export class ProfileChangeNotifications1764600000000 implements MigrationInterface {
  name = 'ProfileChangeNotifications1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(notifyProfileChangesSql());
    for (const { table, column } of TABLES) {
      for (const { event, rows } of EVENTS) {
        await queryRunner.query(
          `CREATE TRIGGER ${table}_notify_${event.toLowerCase()} AFTER ${event} ON ${table}
           REFERENCING ${rows} TABLE AS changed_rows
           FOR EACH STATEMENT EXECUTE FUNCTION notify_profile_changes('${column}')`,
        );
      }
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const { table } of TABLES) {
      for (const { event } of EVENTS) {
        await queryRunner.query(`DROP TRIGGER ${table}_notify_${event.toLowerCase()} ON ${table}`);
      }
    }
    await queryRunner.query(`DROP FUNCTION notify_profile_changes()`);
  }
}

/**
 * The trigger function (created or replaced) that sends the ids of the profiles a statement changed;
 * `prelude` runs first (migration 1764700000000 adds its check there).
 */
export function notifyProfileChangesSql(prelude = ''): string {
  return `CREATE OR REPLACE FUNCTION notify_profile_changes() RETURNS trigger LANGUAGE plpgsql AS $$
     DECLARE
       ids text[];
     BEGIN
       ${prelude}
       EXECUTE format('SELECT array_agg(DISTINCT %I::text) FROM changed_rows', TG_ARGV[0]) INTO ids;
       IF cardinality(ids) > ${PROFILES_NAMED_PER_STATEMENT} THEN
         PERFORM pg_notify('${PROFILE_CHANGES_CHANNEL}', '${EVERY_PROFILE}');
       ELSE
         PERFORM pg_notify('${PROFILE_CHANGES_CHANNEL}', id) FROM unnest(ids) AS id;
       END IF;
       RETURN NULL;
     END $$`;
}

import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BackgroundWork } from '../common/background-work';
import { errorMessage } from '../common/error-message';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

/** PostgreSQL's autovacuum defaults: a table is vacuumed or analyzed past base + share × its rows. */
const VACUUM_BASE_ROWS = 50;
const VACUUM_SHARE = 0.2;
const ANALYZE_BASE_ROWS = 50;
const ANALYZE_SHARE = 0.1;

interface TableUpkeep {
  table: string;
  vacuumed: boolean;
}

interface TableActivity {
  table: string;
  rows: number;
  dead: number;
  modified: number;
}

/**
 * Autovacuum for the embedded database. PGlite is one session with no background workers, so no table
 * is ever analyzed or vacuumed by itself: the planner would keep estimating every table as empty (a
 * 50-memory profile's context statement took twice as long on such plans) and the rows that updates and
 * deletes leave behind would never be reclaimed. This does what autovacuum does, with its thresholds, at
 * boot and every DB_MAINTENANCE_INTERVAL_MS, one run at a time. PGlite's one session is held while a
 * table is vacuumed, so requests wait for it (milliseconds for a table of thousands of rows, longer for
 * a large one). A PostgreSQL server has autovacuum; nothing runs there.
 */
@Injectable()
export class EmbeddedMaintenance implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EmbeddedMaintenance');
  private stopRepeats: () => void = () => undefined;
  private running = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly background: BackgroundWork,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.databaseUrl !== null) return;
    this.stopRepeats = this.background.repeat(
      'embedded table upkeep',
      this.config.embeddedMaintenanceIntervalMs,
      () => this.runLogged(),
    );
  }

  beforeApplicationShutdown(): void {
    this.stopRepeats();
  }

  /** Vacuums and analyzes the tables past autovacuum's thresholds; returns what it did. */
  async upkeep(): Promise<TableUpkeep[]> {
    const done: TableUpkeep[] = [];
    for (const table of await this.activity()) {
      const vacuum = table.dead > VACUUM_BASE_ROWS + VACUUM_SHARE * table.rows;
      const analyze = table.modified > ANALYZE_BASE_ROWS + ANALYZE_SHARE * table.rows;
      if (!vacuum && !analyze) continue;
      await this.dataSource.query(`${vacuum ? 'VACUUM ANALYZE' : 'ANALYZE'} ${quoteIdentifier(table.table)}`);
      done.push({ table: table.table, vacuumed: vacuum });
    }
    return done;
  }

  private async activity(): Promise<TableActivity[]> {
    const rows: Array<{ table: string; rows: number; dead: string; modified: string }> =
      await this.dataSource.query(
        `SELECT s.relname AS table, greatest(c.reltuples, 0)::float8 AS rows,
                s.n_dead_tup AS dead, s.n_mod_since_analyze AS modified
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
         WHERE s.schemaname = current_schema()
         ORDER BY s.relname`,
      );
    return rows.map((row) => ({
      table: row.table,
      rows: Number(row.rows),
      dead: Number(row.dead),
      modified: Number(row.modified),
    }));
  }

  private async runLogged(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const done = await this.upkeep();
      if (done.length > 0) {
        this.logger.debug(done.map((t) => `${t.vacuumed ? 'vacuumed' : 'analyzed'} ${t.table}`).join(', '));
      }
    } catch (error) {
      this.logger.warn(`table upkeep failed, tried again later: ${errorMessage(error)}`);
    } finally {
      this.running = false;
    }
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

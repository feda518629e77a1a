import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client, ClientConfig, Notification } from 'pg';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import {
  EVERY_PROFILE,
  PROFILE_CHANGES_CHANNEL,
  PROFILE_CHANGES_PROBE_CHANNEL,
} from './profile-changes-channel';

/** A moment in the feed: what a reader noted before it read, to ask later whether a profile changed since. */
export interface ChangeToken {
  /**
   * Bumped whenever the feed stops or starts hearing every change, and when every profile changed: a
   * token of an older epoch never holds.
   */
  epoch: number;
  /** How many changes had been heard. */
  sequence: number;
}

/** Profiles whose last change is remembered; past this the record starts again (older tokens then fail). */
const REMEMBERED_PROFILES = 100_000;
/** The dedicated listener's liveness query comes this often and must answer within it. */
const HEARTBEAT_MS = 5_000;
const RECONNECT_MS = 1_000;
/** The dedicated listener's connection, as PostgreSQL's pg_stat_activity names it. */
export const CHANGE_LISTENER_APPLICATION_NAME = 'profile-memory-service-changes';
/** The connection that sends the feed's probes. */
export const CHANGE_PROBE_APPLICATION_NAME = 'profile-memory-service-probe';
/** How often a probe is sent to the listener. */
export const CHANGE_PROBE_INTERVAL_MS = 250;
/** How late the last probe heard may be sent before the feed stops being live. */
export const CHANGE_PROBE_DEADLINE_MS = 750;
/**
 * The longest a change committed by another session can go unheard while the feed is live: a probe
 * sent after the change is heard only after it (PostgreSQL delivers notifications in commit order),
 * and the feed stops being live once no probe sent in the last interval plus deadline was heard.
 */
export const CHANGE_FEED_BOUND_MS = CHANGE_PROBE_INTERVAL_MS + CHANGE_PROBE_DEADLINE_MS;

/**
 * Which profiles changed since a moment, as the database tells it: triggers send a profile's id on
 * PROFILE_CHANGES_CHANNEL when a change of its row, traits or memories commits (migration
 * 1764600000000), whichever replica or statement made it; a statement that only marks memories used
 * sends nothing (migration 1764700000000), and held copies take those times when next confirmed.
 *
 * Every pooled connection of this process listens (`Client`), and PostgreSQL hands a session its own
 * notifications before the COMMIT's answer: a write made by this process is known here before its
 * transaction returns, so this process's next read sees it. On a server a dedicated connection also
 * listens all the time, for the other sessions' writes; while it is not connected (or misses its
 * heartbeat) the feed is not live and no token holds, since changes may go unheard.
 *
 * A listener can also stop hearing without losing its connection: held back (a stalled socket, a
 * paused process) or deaf (behind a transaction-pooling proxy, where a LISTEN binds to a server
 * session the listener no longer talks to). So a second connection sends a probe notification every
 * CHANGE_PROBE_INTERVAL_MS, and the feed is live only while the listener heard a probe sent within
 * the last CHANGE_FEED_BOUND_MS: every change committed before that probe was heard before it.
 *
 * Every listening session receives every notification, so each change is counted once, by the session
 * that made it when that is one of this process's pooled connections, by the dedicated listener
 * otherwise. A copy counted again a moment later would mark the profile changed after the token of a
 * read that already saw the change, and the held copy would be confirmed for nothing. The embedded
 * database is one session in this process, so every change passes through it.
 */
@Injectable()
export class ProfileChangeFeed implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ProfileChangeFeed');
  /** The pg client class for this process's pools: it listens from its connection on. */
  readonly Client: typeof Client;
  private live: boolean;
  private epoch = 0;
  private sequence = 0;
  private readonly changedAt = new Map<string, number>();
  /** Changes up to this sequence are no longer in `changedAt`. */
  private forgottenThrough = 0;
  private listener: Client | null = null;
  /** The server process ids of this process's pooled connections: their changes are counted as they make them. */
  private readonly ownSessions = new Set<number>();
  private queueUsage: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Whether the listener is connected and answers its heartbeat. */
  private listening = false;
  /** This feed's probes carry it, so that another replica's are told apart. */
  private readonly probeId = randomUUID();
  private probeSequence = 0;
  /** When (performance.now()) each probe not yet heard was sent. */
  private readonly probesSent = new Map<number, number>();
  /** When the newest probe heard was sent; -Infinity before the first. */
  private lastProbeHeardSentAt = -Infinity;
  private prober: Client | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private warnedDeaf = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.live = config.databaseUrl === null;
    this.Client = listeningClientClass({
      connected: (session) => this.ownSessions.add(session),
      heard: (message, session) => {
        // on a server the dedicated listener counts the other sessions' changes; a connection that
        // names no session (a pooler in between) counts all it hears, its own changes among them
        if (config.databaseUrl === null || session === null || message.processId === session) {
          this.onNotification(message);
        }
      },
      lost: (session, error) => {
        this.ownSessions.delete(session);
        // a COMMIT's notification may have been lost with the connection, and its copy was ignored
        if (error) this.epoch++;
      },
    });
  }

  /** Now, for `unchangedSince`; null when the feed is not live (nothing read now may be trusted later). */
  token(): ChangeToken | null {
    return this.live ? { epoch: this.epoch, sequence: this.sequence } : null;
  }

  /** Whether the feed has heard every change since `token`, and none of them was this profile's. */
  unchangedSince(profileId: string, token: ChangeToken): boolean {
    if (!this.live || token.epoch !== this.epoch) return false;
    if (token.sequence === this.sequence) return true;
    const changed = this.changedAt.get(profileId);
    return changed === undefined ? this.forgottenThrough <= token.sequence : changed <= token.sequence;
  }

  /** Whether this process hears every profile change now. */
  get isLive(): boolean {
    return this.live;
  }

  /**
   * The share of PostgreSQL's notification queue in use, as the listener's last heartbeat read it (null
   * on the embedded database, or before the first heartbeat). A listening session that stops reading
   * (a hung replica) holds the queue back, and when it is full every write that notifies fails.
   */
  get notifyQueueUsage(): number | null {
    return this.queueUsage;
  }

  onApplicationBootstrap(): void {
    if (this.config.databaseUrl === null) return;
    this.connectListener();
    this.probeTimer = setInterval(() => this.probe(), CHANGE_PROBE_INTERVAL_MS).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.setLive(false);
    await this.listener?.end().catch(() => undefined);
    await this.prober?.end().catch(() => undefined);
  }

  /** Sends the next probe, and judges from the ones heard whether the feed hears every change. */
  private probe(): void {
    this.judgeLiveness();
    if (this.stopped) return;
    if (this.prober === null) {
      const prober = new Client({
        connectionString: this.config.databaseUrl!,
        application_name: CHANGE_PROBE_APPLICATION_NAME,
        connectionTimeoutMillis: HEARTBEAT_MS,
        query_timeout: HEARTBEAT_MS,
        keepAlive: true,
      } satisfies ClientConfig);
      this.prober = prober;
      const drop = () => {
        if (this.prober === prober) this.prober = null;
        prober.end().catch(() => undefined);
      };
      prober.on('error', drop);
      prober.connect().catch(drop);
    }
    const sequence = ++this.probeSequence;
    this.probesSent.set(sequence, performance.now());
    // probes unheard for long are forgotten: the liveness judgement needs only the newest heard
    for (const [old, sentAt] of this.probesSent) {
      if (sentAt >= performance.now() - 10 * CHANGE_FEED_BOUND_MS) break;
      this.probesSent.delete(old);
    }
    this.prober
      .query(`SELECT pg_notify($1, $2)`, [PROFILE_CHANGES_PROBE_CHANNEL, `${this.probeId}:${sequence}`])
      .catch(() => undefined);
  }

  private onProbe(payload: string): void {
    const [id, sequence] = payload.split(':');
    if (id !== this.probeId) return;
    const sentAt = this.probesSent.get(Number(sequence));
    if (sentAt === undefined) return;
    for (const heard of this.probesSent.keys()) {
      if (heard > Number(sequence)) break;
      this.probesSent.delete(heard);
    }
    this.lastProbeHeardSentAt = Math.max(this.lastProbeHeardSentAt, sentAt);
    this.judgeLiveness();
  }

  /** Live while the listener is connected and heard a probe sent within CHANGE_FEED_BOUND_MS. */
  private judgeLiveness(): void {
    const hearing = performance.now() - this.lastProbeHeardSentAt <= CHANGE_FEED_BOUND_MS;
    if (this.listening && !hearing && this.live && !this.warnedDeaf) {
      this.warnedDeaf = true;
      this.logger.warn(
        'the change listener heard no probe in time (held back, or behind a transaction-pooling proxy); ' +
          'held contexts are confirmed until it hears again',
      );
    }
    if (hearing) this.warnedDeaf = false;
    this.setLive(this.listening && hearing);
  }

  private onNotification(message: Notification): void {
    if (message.channel !== PROFILE_CHANGES_CHANNEL || !message.payload) return;
    if (message.payload === EVERY_PROFILE) {
      this.epoch++;
      return;
    }
    this.sequence++;
    if (this.changedAt.size >= REMEMBERED_PROFILES) {
      this.changedAt.clear();
      this.forgottenThrough = this.sequence - 1;
    }
    this.changedAt.delete(message.payload);
    this.changedAt.set(message.payload, this.sequence);
  }

  private setLive(live: boolean): void {
    if (this.live === live) return;
    this.live = live;
    this.epoch++;
  }

  /** Connects the dedicated listener; on any failure the feed is not live until a new one listens. */
  private connectListener(): void {
    if (this.stopped) return;
    const listener = new this.Client({
      connectionString: this.config.databaseUrl!,
      application_name: CHANGE_LISTENER_APPLICATION_NAME,
      connectionTimeoutMillis: HEARTBEAT_MS,
      query_timeout: HEARTBEAT_MS,
      keepAlive: true,
    } satisfies ClientConfig);
    this.listener = listener;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      this.listening = false;
      this.setLive(false);
      if (this.timer) clearTimeout(this.timer);
      listener.end().catch(() => undefined);
      if (this.stopped) return;
      this.logger.warn(
        `change listener lost (${error.message}); held contexts are confirmed until it is back`,
      );
      this.timer = setTimeout(() => this.connectListener(), RECONNECT_MS).unref();
    };
    listener.on('error', fail);
    listener.on('end', () => fail(new Error('connection ended')));
    listener.on('notification', (message: Notification) => {
      if (message.channel === PROFILE_CHANGES_PROBE_CHANNEL) this.onProbe(message.payload ?? '');
      else if (!this.ownSessions.has(message.processId)) this.onNotification(message);
    });
    const heartbeat = (): void => {
      listener.query<{ usage: number }>('SELECT pg_notification_queue_usage() AS usage').then(({ rows }) => {
        this.queueUsage = rows[0].usage;
        if (failed) return;
        this.listening = true;
        this.judgeLiveness();
        this.timer = setTimeout(heartbeat, HEARTBEAT_MS).unref();
      }, fail);
    };
    listener
      .connect()
      .then(() => listener.query(`LISTEN ${PROFILE_CHANGES_PROBE_CHANNEL}`))
      .then(() => {
        if (!failed && !this.stopped) heartbeat();
      }, fail);
  }
}

/** What the feed learns from its pools' connections, each named by its server process id. */
interface PooledSessionEvents {
  connected(session: number): void;
  heard(message: Notification, session: number | null): void;
  lost(session: number, error: Error | undefined): void;
}

/**
 * A pg client class that listens on PROFILE_CHANGES_CHANNEL once connected, and tells `events` of its
 * session and of every notification it hears. Passed to pg pools as their `Client`.
 */
function listeningClientClass(events: PooledSessionEvents): typeof Client {
  return class ListeningClient extends Client {
    /** Set by node-postgres from the server's BackendKeyData (null on the embedded database). */
    declare readonly processID: number | null;

    constructor(config?: string | ClientConfig) {
      super(config);
      this.on('notification', (message: Notification) => events.heard(message, this.processID));
    }

    override connect(): Promise<Client>;
    override connect(callback: (error: Error | null, client?: Client) => void): void;
    override connect(callback?: (error: Error | null, client?: Client) => void): Promise<Client> | void {
      const listening = super
        .connect()
        .then(() => {
          this.noteSession();
          return this.query(`LISTEN ${PROFILE_CHANGES_CHANNEL}`);
        })
        .then(() => this as Client);
      if (!callback) return listening;
      listening.then(
        (client) => callback(null, client),
        (error: Error) => callback(error),
      );
    }

    /** Before the LISTEN: the session's own notifications are counted from its first statement on. */
    private noteSession(): void {
      const session = this.processID;
      if (session === null) return;
      events.connected(session);
      let failure: Error | undefined;
      this.on('error', (error: Error) => (failure ??= error));
      this.once('end', () => events.lost(session, failure));
    }
  };
}

import type { Client } from 'pg';
import type { AppConfig } from '../config/app-config';
import { ProfileChangeFeed } from './profile-changes';
import { EVERY_PROFILE, PROFILE_CHANGES_CHANNEL } from './profile-changes-channel';

/** A feed as on the embedded database (live from the start), and a client of its pools to hear with. */
function embeddedFeed(): { feed: ProfileChangeFeed; notify: (payload: string, channel?: string) => void } {
  const feed = new ProfileChangeFeed({ databaseUrl: null } as AppConfig);
  const client: Client = new feed.Client();
  const notify = (payload: string, channel = PROFILE_CHANGES_CHANNEL) =>
    client.emit('notification', { processId: 1, channel, payload });
  return { feed, notify };
}

describe('ProfileChangeFeed', () => {
  it('says a profile changed after a moment only when a change of it was heard after that moment', () => {
    const { feed, notify } = embeddedFeed();
    notify('before');
    const token = feed.token()!;
    expect(feed.unchangedSince('before', token)).toBe(true);
    notify('changed');
    notify('other-channel', 'something_else');
    expect(feed.unchangedSince('changed', token)).toBe(false);
    expect(feed.unchangedSince('before', token)).toBe(true);
    expect(feed.unchangedSince('other-channel', token)).toBe(true);
    expect(feed.unchangedSince('changed', feed.token()!)).toBe(true);
  });

  it('voids every earlier moment when told that every profile changed', () => {
    const { feed, notify } = embeddedFeed();
    const token = feed.token()!;
    notify(EVERY_PROFILE);
    expect(feed.unchangedSince('any', token)).toBe(false);
    expect(feed.unchangedSince('any', feed.token()!)).toBe(true);
  });

  it('when it forgets old changes to stay bounded, the moments before them no longer hold', () => {
    const { feed, notify } = embeddedFeed();
    const old = feed.token()!;
    for (let i = 0; i < 100_001; i++) notify(`profile-${i}`);
    const recent = feed.token()!;
    notify('last');
    expect(feed.unchangedSince('untouched', old)).toBe(false);
    expect(feed.unchangedSince('untouched', recent)).toBe(true);
    expect(feed.unchangedSince('last', recent)).toBe(false);
  });

  it("on a server, a pooled connection counts its own session's changes only", () => {
    const feed = new ProfileChangeFeed({ databaseUrl: 'postgres://127.0.0.1:1/none' } as AppConfig);
    (feed as unknown as { live: boolean }).live = true;
    const client = new feed.Client() as Client & { processID: number };
    client.processID = 7;
    const token = feed.token()!;
    client.emit('notification', { processId: 8, channel: PROFILE_CHANGES_CHANNEL, payload: 'theirs' });
    expect(feed.unchangedSince('theirs', token)).toBe(true);
    client.emit('notification', { processId: 7, channel: PROFILE_CHANGES_CHANNEL, payload: 'mine' });
    expect(feed.unchangedSince('mine', token)).toBe(false);
  });

  it('on a server, a pooled connection that names no session counts every change it hears', () => {
    const feed = new ProfileChangeFeed({ databaseUrl: 'postgres://127.0.0.1:1/none' } as AppConfig);
    (feed as unknown as { live: boolean }).live = true;
    const client = new feed.Client() as Client & { processID: number | null };
    client.processID = null;
    const token = feed.token()!;
    client.emit('notification', { processId: 8, channel: PROFILE_CHANGES_CHANNEL, payload: 'heard' });
    expect(feed.unchangedSince('heard', token)).toBe(false);
  });

  it('on a server, hands out no moment until its listener listens', () => {
    const feed = new ProfileChangeFeed({ databaseUrl: 'postgres://127.0.0.1:1/none' } as AppConfig);
    expect(feed.isLive).toBe(false);
    expect(feed.token()).toBeNull();
  });
});

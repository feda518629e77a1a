import { useState } from 'preact/hooks';
import { api, call } from './api';
import { ErrorNote, formatDate, go, Loading, useLoad } from './ui';

export const PROFILE_PAGE_SIZE = 20;

/** The profiles, newest first, searched by user id and paged, with what each holds. */
export function ProfilesPage({ query }: { query: URLSearchParams }) {
  const search = query.get('search') ?? '';
  const offset = Math.max(0, Number(query.get('offset') ?? 0) || 0);
  const [typed, setTyped] = useState(search);
  const notice = query.get('erased');
  const list = useLoad(
    () =>
      call(
        api.GET('/api/profiles', {
          params: { query: { limit: PROFILE_PAGE_SIZE, offset, ...(search ? { search } : {}) } },
        }),
      ),
    [search, offset],
  );
  const to = (next: { search?: string; offset?: number }) => {
    const params = new URLSearchParams();
    const s = next.search ?? search;
    if (s) params.set('search', s);
    if (next.offset) params.set('offset', String(next.offset));
    go(`#/profiles?${params.toString()}`);
  };
  const total = list.data?.total ?? 0;
  return (
    <>
      <h1>Profiles</h1>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form
        class="row"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          to({ search: typed.trim(), offset: 0 });
        }}
      >
        <label for="profile-search">User id</label>
        <input
          id="profile-search"
          type="search"
          value={typed}
          onInput={(e) => setTyped(e.currentTarget.value)}
        />
        <button type="submit">Search</button>
      </form>
      <ErrorNote error={list.error} />
      {list.loading && !list.data && <Loading what="profiles" />}
      {list.data && (
        <>
          <p class="muted">
            {total === 0
              ? 'No profile matches.'
              : `Profiles ${offset + 1}–${offset + list.data.profiles.length} of ${total}, newest first.`}
          </p>
          <table>
            <thead>
              <tr>
                <th scope="col">User id</th>
                <th scope="col">Traits</th>
                <th scope="col">Memories</th>
                <th scope="col">Messages</th>
                <th scope="col">Learning</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.profiles.map((profile) => (
                <tr key={profile.id}>
                  <td>
                    <a href={`#/profiles/${encodeURIComponent(profile.id)}`}>
                      {profile.externalId ?? profile.id}
                    </a>
                  </td>
                  <td>{profile.counts.traits}</td>
                  <td>{profile.counts.memories}</td>
                  <td>{profile.counts.messages}</td>
                  <td>
                    {profile.counts.pending} pending
                    {profile.counts.failed > 0 && <span class="warn">, {profile.counts.failed} failed</span>}
                  </td>
                  <td>{formatDate(profile.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav class="row" aria-label="Profile pages">
            <button
              type="button"
              disabled={offset === 0}
              onClick={() => to({ offset: Math.max(0, offset - PROFILE_PAGE_SIZE) })}
            >
              Newer
            </button>
            <button
              type="button"
              disabled={offset + PROFILE_PAGE_SIZE >= total}
              onClick={() => to({ offset: offset + PROFILE_PAGE_SIZE })}
            >
              Older
            </button>
          </nav>
        </>
      )}
    </>
  );
}

import { useState } from 'preact/hooks';
import { ALL_SCOPES, type Scope } from './access';
import { callRoute } from './api';
import type { ApiKey, Application, ApplicationSummary, AuditEvent } from './tenancy-contract';
import { CursorPager, ErrorNote, formatDate, go, Loading, useAction, useCursorPages, useLoad } from './ui';

const appName = (application: ApplicationSummary | string | null): string =>
  application === null ? '—' : typeof application === 'string' ? application : application.name;

/** The application's keys: created with their scopes (the secret is shown once), listed (the revoked ones left out), revoked. */
export function KeysPage() {
  const keys = useLoad(() => callRoute<{ keys: ApiKey[] }>('GET', '/api/keys'), []);
  const applications = useLoad(
    () => callRoute<{ applications: Application[] }>('GET', '/api/applications'),
    [],
  );
  const [name, setName] = useState('');
  const [application, setApplication] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['proxy']);
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  const create = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await callRoute<{ key: ApiKey; secret: string }>('POST', '/api/keys', {
        name,
        scopes,
        ...(application ? { application } : {}),
      });
      setSecret(created.secret);
      setName('');
      keys.reload();
    });
  };
  return (
    <>
      <h1>Keys</h1>
      <form class="card" onSubmit={create}>
        <h2>New key</h2>
        <label for="key-name">Name</label>
        <input id="key-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        <label for="key-application">Application</label>
        <select
          id="key-application"
          value={application}
          onChange={(e) => setApplication(e.currentTarget.value)}
        >
          <option value="">This key's application</option>
          {applications.data?.applications.map((app) => (
            <option value={app.id} key={app.id}>
              {app.name}
            </option>
          ))}
        </select>
        <fieldset>
          <legend>Scopes</legend>
          {ALL_SCOPES.map((scope) => (
            <label key={scope} class="row">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) =>
                  setScopes(e.currentTarget.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope))
                }
              />
              {scope}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={action.busy || scopes.length === 0}>
          Create key
        </button>
        {secret && (
          <p role="status" class="notice">
            The new key, shown only now: <code class="secret">{secret}</code>
          </p>
        )}
      </form>
      <ErrorNote error={keys.error ?? action.error} />
      {keys.loading && !keys.data && <Loading what="keys" />}
      {keys.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Application</th>
              <th scope="col">Scopes</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.keys
              .filter((key) => !key.revokedAt)
              .map((key) => (
                <tr key={key.id}>
                  <th scope="row">{key.name}</th>
                  <td>
                    <code>{key.prefix}</code>
                  </td>
                  <td>{appName(key.application)}</td>
                  <td>{key.scopes.join(', ')}</td>
                  <td>{formatDate(key.lastUsedAt)}</td>
                  <td>{formatDate(key.expiresAt)}</td>
                  <td>
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Revoke ${key.name}`}
                      onClick={() =>
                        void action.run(async () => {
                          await callRoute('DELETE', `/api/keys/${encodeURIComponent(key.id)}`);
                          keys.reload();
                        })
                      }
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      )}
    </>
  );
}

export function ApplicationsPage() {
  const applications = useLoad(
    () => callRoute<{ applications: Application[] }>('GET', '/api/applications'),
    [],
  );
  const [name, setName] = useState('');
  const action = useAction();
  return (
    <>
      <h1>Applications</h1>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => {
            await callRoute('POST', '/api/applications', { name });
            setName('');
            applications.reload();
          });
        }}
      >
        <label for="application-name">New application</label>
        <input id="application-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        <button type="submit" disabled={action.busy}>
          Create application
        </button>
      </form>
      <ErrorNote error={applications.error ?? action.error} />
      {applications.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {applications.data.applications.map((app) => (
              <tr key={app.id}>
                <th scope="row">{app.name}</th>
                <td>
                  <code>{app.id}</code>
                </td>
                <td>{formatDate(app.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** The audit trail, newest first, filtered by profile and action, paged by the service's cursor. */
export function AuditPage({ query }: { query: URLSearchParams }) {
  const profile = query.get('profile') ?? '';
  const actionFilter = query.get('action') ?? '';
  const pages = useCursorPages();
  const cursor = pages.cursor;
  const [typed, setTyped] = useState({ profile, action: actionFilter });
  const events = useLoad(() => {
    const params = new URLSearchParams();
    if (profile) params.set('profile', profile);
    if (actionFilter) params.set('action', actionFilter);
    if (cursor) params.set('cursor', cursor);
    return callRoute<{ events: AuditEvent[]; next: string | null }>('GET', `/api/audit?${params.toString()}`);
  }, [profile, actionFilter, cursor]);
  return (
    <>
      <h1>Audit trail</h1>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          pages.reset();
          const params = new URLSearchParams();
          if (typed.profile) params.set('profile', typed.profile);
          if (typed.action) params.set('action', typed.action);
          go(`#/audit?${params.toString()}`);
        }}
      >
        <label for="audit-profile">Profile</label>
        <input
          id="audit-profile"
          value={typed.profile}
          onInput={(e) => setTyped({ ...typed, profile: e.currentTarget.value })}
        />
        <label for="audit-action">Action</label>
        <input
          id="audit-action"
          value={typed.action}
          onInput={(e) => setTyped({ ...typed, action: e.currentTarget.value })}
        />
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={events.error} />
      {events.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Key</th>
              <th scope="col">Application</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {events.data.events.map((event) => (
              <tr key={event.id}>
                <td>{formatDate(event.at)}</td>
                <td>{event.action}</td>
                <td>{typeof event.target === 'string' ? event.target : JSON.stringify(event.target)}</td>
                <td>
                  <code>{event.keyId ?? 'root'}</code>
                </td>
                <td>{appName(event.application)}</td>
                <td>{event.outcome}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CursorPager what="events" pages={pages} next={events.data?.next} />
    </>
  );
}

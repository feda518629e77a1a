import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type Access, accessOf, may } from './access';
import { errorText, storedKey } from './api';
import { ProfilePage } from './profile-page';
import { ProfilesPage } from './profiles-page';
import { ApplicationsPage, AuditPage, KeysPage } from './tenancy-pages';
import { ErrorNote } from './ui';
import './styles.css';

/** The page a location hash names: #/profiles?search=..., #/profiles/<id>, #/keys, ... */
export interface Route {
  page: 'profiles' | 'profile' | 'keys' | 'applications' | 'audit';
  id?: string;
  query: URLSearchParams;
}

function routeOf(hash: string): Route {
  const [path, search = ''] = hash.replace(/^#/, '').split('?', 2);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const query = new URLSearchParams(search);
  if (parts[0] === 'profiles' && parts[1]) return { page: 'profile', id: parts[1], query };
  if (parts[0] === 'keys' || parts[0] === 'applications' || parts[0] === 'audit')
    return { page: parts[0], query };
  return { page: 'profiles', query };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(routeOf(window.location.hash));
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}

function SignIn({ onSignedIn }: { onSignedIn: (access: Access) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    storedKey.set(key.trim());
    try {
      onSignedIn(await accessOf());
    } catch (failure) {
      storedKey.clear();
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Profile Memory Service</h1>
      <form onSubmit={(event) => void submit(event)} class="card">
        <h2>Sign in</h2>
        <p class="muted">
          The key is kept for this tab only and sent to this service's API with every request.
        </p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
          required
        />
        <ErrorNote error={error} />
        <button type="submit" disabled={busy || key.trim() === ''}>
          Sign in
        </button>
      </form>
    </main>
  );
}

function Shell({ access, onSignOut }: { access: Access; onSignOut: () => void }) {
  const route = useRoute();
  const admin = access.tenancy && may(access, 'admin');
  const links: Array<[Route['page'], string, string]> = [['profiles', 'Profiles', '#/profiles']];
  if (admin)
    links.push(
      ['keys', 'Keys', '#/keys'],
      ['applications', 'Applications', '#/applications'],
      ['audit', 'Audit trail', '#/audit'],
    );
  const current = route.page === 'profile' ? 'profiles' : route.page;
  return (
    <>
      <header class="top">
        <span class="brand">Profile Memory console</span>
        <nav aria-label="Main">
          {links.map(([page, label, href]) => (
            <a href={href} aria-current={current === page ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="who">
          {access.application ? `${access.application.name} · ` : ''}
          {access.keyName} ({access.scopes.join(', ')})
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main>
        {!may(access, 'read') ? (
          <p class="error" role="alert">
            This key may only chat through the proxy; the console needs a key with the read scope.
          </p>
        ) : route.page === 'profile' && route.id ? (
          <ProfilePage id={route.id} access={access} />
        ) : admin && route.page === 'keys' ? (
          <KeysPage />
        ) : admin && route.page === 'applications' ? (
          <ApplicationsPage />
        ) : admin && route.page === 'audit' ? (
          <AuditPage query={route.query} />
        ) : (
          <ProfilesPage query={route.query} />
        )}
      </main>
    </>
  );
}

function App() {
  const [access, setAccess] = useState<Access | null>(null);
  const [checking, setChecking] = useState(storedKey.get() !== null);
  useEffect(() => {
    if (!checking) return;
    accessOf()
      .then(setAccess, () => storedKey.clear())
      .finally(() => setChecking(false));
  }, []);
  if (checking) return <p role="status">Checking the key…</p>;
  if (!access) return <SignIn onSignedIn={setAccess} />;
  return (
    <Shell
      access={access}
      onSignOut={() => {
        storedKey.clear();
        setAccess(null);
      }}
    />
  );
}

render(<App />, document.getElementById('app')!);

import { api, ApiFailure, call, callRoute } from './api';
import type { ApplicationSummary } from './tenancy-contract';

export type Scope = 'proxy' | 'read' | 'write' | 'admin';
export const ALL_SCOPES: Scope[] = ['proxy', 'read', 'write', 'admin'];

/** Who the signed-in key is and what it may do: the console offers nothing else. */
export interface Access {
  keyName: string;
  root: boolean;
  application: ApplicationSummary | null;
  scopes: Scope[];
  /** The service has applications, keys and an audit trail (GET /api/keys/current answers). */
  tenancy: boolean;
}

export const may = (access: Access, scope: Scope): boolean => access.scopes.includes(scope);

interface CurrentKeyResponse {
  key: {
    id: string | null;
    name: string;
    prefix: string | null;
    root: boolean;
    application: ApplicationSummary;
    scopes: Scope[];
  };
}

/**
 * What the key may do. A service without applications and scoped keys answers 404 for
 * /api/keys/current: its one key may do everything, once a read of /api proves it is the right key.
 */
export async function accessOf(): Promise<Access> {
  try {
    const { key } = await callRoute<CurrentKeyResponse>('GET', '/api/keys/current');
    return {
      keyName: key.name,
      root: key.root,
      application: key.application,
      scopes: key.scopes,
      tenancy: true,
    };
  } catch (error) {
    if (!(error instanceof ApiFailure) || error.status !== 404) throw error;
  }
  await call(api.GET('/api/profiles', { params: { query: { limit: 1 } } }));
  return { keyName: 'service key', root: true, application: null, scopes: ALL_SCOPES, tenancy: false };
}

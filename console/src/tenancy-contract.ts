// The shapes of the applications, keys and audit routes as the multi-application work defines them
// (applications own profiles; keys carry scopes). They move to the generated api-schema.d.ts once the
// service documents those routes.
import type { Scope } from './access';

export interface ApplicationSummary {
  id: string;
  name: string;
}

export interface Application extends ApplicationSummary {
  createdAt: string;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  application: ApplicationSummary | string;
  scopes: Scope[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt?: string | null;
}

export interface AuditEvent {
  id: string;
  at: string;
  keyId: string | null;
  application: ApplicationSummary | string | null;
  action: string;
  target: unknown;
  requestId: string | null;
  outcome: string;
}

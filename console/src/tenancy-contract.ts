// The applications, keys and audit routes' shapes, from the service's OpenAPI document.
import type { components } from './api-schema';

type Schemas = components['schemas'];

export type ApplicationSummary = Schemas['ApplicationRefDto'];
export type Application = Schemas['ApplicationDto'];
export type ApiKey = Schemas['ApiKeyDto'];
export type AuditEvent = Schemas['AuditEventDto'];

import { errorMessage } from './error-message';

/**
 * Failures after which the same statement may well succeed: lost or refused connections, a pool that
 * had no connection to give in time, deadlocks, serialization failures and lock timeouts. Anything
 * else (bad data, a constraint) fails again the same way.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (/^(08|53|57P|40)/.test(code) || code === '55P03') return true; // SQLSTATE classes
    if (/^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH)$/.test(code)) return true;
  }
  const message = errorMessage(error);
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection timeout/i.test(
    message,
  );
}

/** Whether a database error is the violation of a foreign key (a row it refers to is gone). */
export function isForeignKeyViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23503';
}

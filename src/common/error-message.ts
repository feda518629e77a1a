/** The message of an error, for logs and stored failure reasons. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

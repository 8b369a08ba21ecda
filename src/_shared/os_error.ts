/** Errors the operating system reports through Deno's file-system calls. */

/** True for a `Deno.errors` class, or an `(os error n)` message that has no class of its own. */
export function isOsError(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  if (Object.values(Deno.errors).some((type) => error instanceof type)) return true;
  return /\(os error \d+\)/.test(error.message);
}

/**
 * The operating system's reason without the operation and the path, which may be thousands of
 * characters long: `File name too long`, `Permission denied`.
 */
export function osErrorReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/ \(os error \d+\)[\s\S]*$/, "").slice(0, 200);
}

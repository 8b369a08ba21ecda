/** The native loader (toolchain.md §8.4): Deno imports user files itself, once per process. */
import { pathToFileURL } from "node:url";

/** Loads a user module with the runtime's own `import()`; returns its namespace. */
export async function loadNative(path: string): Promise<Record<string, unknown>> {
  return await import(pathToFileURL(path).href) as Record<string, unknown>;
}

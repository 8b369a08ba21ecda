/**
 * Path rules of the facade (sandboxes.md rules 25–26): sandbox paths are POSIX and resolved against
 * the workdir; host paths are resolved against the declaring file's directory, never the cwd.
 */
import { posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SandboxPathError } from "./errors.ts";

/** Normalizes a sandbox path: absolute stays, relative joins `workdir`; empty or NUL throws. */
export function sandboxPath(workdir: string, path: string): string {
  if (typeof path !== "string" || path === "") {
    throw new SandboxPathError(String(path), "Cannot use sandbox path: the path is empty");
  }
  if (path.includes("\0")) {
    throw new SandboxPathError(
      path,
      `Cannot use sandbox path ${JSON.stringify(path)}: it contains NUL`,
    );
  }
  const joined = posix.isAbsolute(path) ? path : posix.join(workdir, path);
  const normalized = posix.normalize(joined);
  return normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}

/** Resolves a host path or `file:` URL against `hostDir` (rule 26). */
export function hostPath(hostDir: string, path: string | URL): string {
  if (path instanceof URL) {
    if (path.protocol !== "file:") {
      throw new SandboxPathError(path.href, `Cannot use host path "${path.href}": not a file URL`);
    }
    return fileURLToPath(path);
  }
  if (typeof path !== "string" || path === "" || path.includes("\0")) {
    throw new SandboxPathError(String(path), "Cannot use host path: empty or contains NUL");
  }
  if (path.startsWith("file:")) return fileURLToPath(path);
  return resolve(hostDir, path);
}

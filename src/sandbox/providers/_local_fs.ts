/** Host file-system helpers of the `local` provider. */
import { join } from "node:path";

/**
 * Removes a directory tree. Agents may leave read-only directories behind; when removal is denied,
 * every directory is made writable and the removal is tried once more. A missing tree is fine.
 */
export async function removeTree(path: string): Promise<void> {
  try {
    await Deno.remove(path, { recursive: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    if (!(error instanceof Deno.errors.PermissionDenied)) throw error;
    await makeWritable(path);
    await Deno.remove(path, { recursive: true });
  }
}

async function makeWritable(dir: string): Promise<void> {
  await Deno.chmod(dir, 0o700);
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory && !entry.isSymlink) await makeWritable(join(dir, entry.name));
  }
}

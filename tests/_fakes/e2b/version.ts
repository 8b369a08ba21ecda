/**
 * The `e2b` SDK version whose wire format the fake serves. The fake was written against the
 * SDK's own sources at this version (REST paths, Connect JSON framing, envd file endpoints); a
 * change of the locked version must be a deliberate re-check of the fake, so a test compares this
 * constant with `deno.lock`.
 */
export const E2B_SDK_VERSION = "2.51.0";

/** The lock file of the repository. */
const LOCK_URL = new URL("../../../deno.lock", import.meta.url);

/** The `e2b` version `deno.lock` resolves the bare specifier to, or `undefined` when absent. */
export async function lockedE2bVersion(lockUrl: URL = LOCK_URL): Promise<string | undefined> {
  const lock = JSON.parse(await Deno.readTextFile(lockUrl)) as {
    specifiers?: Record<string, string>;
  };
  for (const [specifier, resolved] of Object.entries(lock.specifiers ?? {})) {
    // A peer-dependency suffix (`2.51.0_x@1`) is not part of the version.
    if (specifier.startsWith("npm:e2b@")) return resolved.split("_")[0];
  }
  return undefined;
}

/** A temporary directory for the length of one test body. */

/** Runs `fn` with a new temporary directory and removes the directory afterwards. */
export async function withTempDir<T>(
  fn: (dir: string) => Promise<T>,
  prefix = "niceeval-test-",
): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

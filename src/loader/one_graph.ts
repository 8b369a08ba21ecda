/**
 * Loading many user files through one module graph (docs/loader.md "One module graph"): each
 * separate load makes the runtime process the whole graph loaded so far again, so N loads cost
 * O(N²). A group of files loaded at once costs one pass; a group that fails is halved down to
 * single files, so every error is the one a load of that file alone gives.
 */

/** What loading one file gave: its namespace, or the error a load of that file alone throws. */
export type LoadOutcome =
  | { readonly ok: true; readonly namespace: Record<string, unknown> }
  | { readonly ok: false; readonly error: unknown };

/** Loads a user module by absolute path; returns its namespace. */
export interface ModuleLoader {
  (path: string): Promise<Record<string, unknown>>;
  /**
   * Loads `paths` in order, in one module graph when they all load; one outcome per path, each
   * what a load of that path alone gives. Absent: the caller loads the files one by one.
   */
  readonly loadAll?: (paths: readonly string[]) => Promise<LoadOutcome[]>;
}

/**
 * Loads a group of files at once, in order; returns their namespaces, or throws when any file
 * fails (files before the failing one may have been evaluated, as a load of the group would).
 */
export type GroupLoad = (paths: readonly string[]) => Promise<Record<string, unknown>[]>;

/**
 * Thrown by a {@link GroupLoad} that cannot load any group (its entry cannot be written): the
 * remaining files are loaded one by one.
 */
export class GroupUnavailable extends Error {
  override readonly name = "GroupUnavailable";
}

/** A failed group at most this large is loaded file by file rather than halved again. */
const SINGLES_AT = 8;

/**
 * Loads `paths` as one group; a group that fails is halved, and one of {@link SINGLES_AT} files
 * or fewer is loaded file by file with `single`, so every error comes from a load of its file
 * alone. Files start evaluating in the order of `paths` in every case: a failed group evaluates
 * at most a prefix of itself, which the retries find already evaluated.
 */
export async function loadInOneGraph(
  paths: readonly string[],
  group: GroupLoad,
  single: (path: string) => Promise<Record<string, unknown>>,
): Promise<LoadOutcome[]> {
  const state = { grouping: true };
  const singles = async (part: readonly string[]) => {
    const outcomes: LoadOutcome[] = [];
    for (const path of part) outcomes.push(await settle(() => single(path)));
    return outcomes;
  };
  const load = async (part: readonly string[]): Promise<LoadOutcome[]> => {
    if (!state.grouping || part.length <= 1) return await singles(part);
    try {
      const namespaces = await group(part);
      return namespaces.map((namespace) => ({ ok: true, namespace }));
    } catch (error) {
      if (error instanceof GroupUnavailable) state.grouping = false;
      if (!state.grouping || part.length <= SINGLES_AT) return await singles(part);
      const half = Math.ceil(part.length / 2);
      return [...await load(part.slice(0, half)), ...await load(part.slice(half))];
    }
  };
  return await load(paths);
}

async function settle(load: () => Promise<Record<string, unknown>>): Promise<LoadOutcome> {
  try {
    return { ok: true, namespace: await load() };
  } catch (error) {
    return { ok: false, error };
  }
}

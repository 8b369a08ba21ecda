/** The per-user state directory (LOCK-2): `$NICEEVAL_STATE_DIR` → `$XDG_STATE_HOME/niceeval` → `~/.local/state/niceeval`. */
import { join } from "node:path";

/** Resolves the state directory from an environment snapshot. */
export function stateDirOf(env: Readonly<Record<string, string>>): string {
  if (env.NICEEVAL_STATE_DIR) return env.NICEEVAL_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "niceeval");
  return join(env.HOME ?? "/tmp", ".local", "state", "niceeval");
}

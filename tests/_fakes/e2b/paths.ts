/**
 * Where a fake sandbox's paths live on the host. A sandbox is a temp directory: sandbox paths under
 * the mapped prefixes (`/home`, `/root`, `/tmp` by default) live below that directory, every other
 * absolute path is the host's own (`/bin/bash`, `/usr/bin/setsid`), readable but never written
 * through the file API. Commands are real host processes, so the mapped prefixes are also
 * rewritten in the command text, arguments, working directory and environment values of every
 * process the fake starts; output is passed through unchanged (a `pwd` prints the host path).
 */
import { isAbsolute, join, posix } from "node:path";

/** The prefixes that live inside the sandbox root unless the fake is told otherwise. */
export const DEFAULT_MAPPED_PREFIXES: readonly string[] = ["/home", "/root", "/tmp"];

/** A sandbox path resolved on the host. */
export interface HostPath {
  /** Absolute, normalized sandbox path. */
  readonly sandbox: string;
  /** The host path holding it. */
  readonly host: string;
  /** Whether it lies inside the sandbox root (writable through the file API). */
  readonly mapped: boolean;
}

const PATH_CHAR = "A-Za-z0-9._~/-";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The path mapping of one sandbox. */
export class PathMap {
  readonly #prefixes: readonly string[];
  readonly #rewrite: RegExp;

  constructor(readonly root: string, prefixes: readonly string[] = DEFAULT_MAPPED_PREFIXES) {
    this.#prefixes = prefixes.map((p) => posix.normalize(p).replace(/\/$/, ""));
    const alternation = this.#prefixes.map(escapeRegExp).join("|");
    // A prefix counts only as a whole path component at the start of a path token.
    this.#rewrite = new RegExp(`(^|[^${PATH_CHAR}])(${alternation})(?=/|$|[^${PATH_CHAR}])`, "g");
  }

  /** The home directory of `user` as a sandbox path. */
  home(user: string): string {
    return user === "root" ? "/root" : `/home/${user}`;
  }

  /** Resolves a sandbox path; a relative one is relative to `user`'s home, like envd does. */
  resolve(path: string, user: string): HostPath {
    const sandbox = posix.normalize(isAbsolute(path) ? path : posix.join(this.home(user), path));
    const mapped = this.#prefixes.some((p) => sandbox === p || sandbox.startsWith(`${p}/`));
    return { sandbox, host: mapped ? join(this.root, sandbox) : sandbox, mapped };
  }

  /** The sandbox path of a host path below the root (the inverse of {@link resolve}). */
  toSandbox(host: string): string {
    return host.startsWith(`${this.root}/`) ? host.slice(this.root.length) : host;
  }

  /** Rewrites the mapped prefixes in command text so that the host process finds them. */
  rewrite(text: string): string {
    return text.replace(
      this.#rewrite,
      (_m, lead: string, prefix: string) => `${lead}${this.root}${prefix}`,
    );
  }
}

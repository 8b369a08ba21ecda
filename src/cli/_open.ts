/**
 * Opening a report in the user's browser (`view --open`): `$BROWSER` when set, else the system's
 * opener. The browser is started and left running; only a failure to start it is reported.
 */
import type { Io } from "./io.ts";

/** The opener of each platform and its arguments before the target. */
function systemOpener(os: string | undefined): readonly string[] {
  if (os === "darwin") return ["open"];
  if (os === "windows") return ["cmd", "/c", "start", '""'];
  return ["xdg-open"];
}

/**
 * Starts a browser on `target` (a file path or an http URL) and does not wait for it; returns
 * null, or why it could not be started.
 */
export function openInBrowser(io: Io, target: string): string | null {
  const browser = io.env.BROWSER?.trim();
  const [command, ...args] = browser ? [browser] : systemOpener(io.os);
  try {
    const child = new Deno.Command(command!, {
      args: [...args, target],
      cwd: io.cwd,
      env: io.env,
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.unref();
    // Reaped in the background; whether the opener later fails is the browser's own business.
    child.status.catch(() => {});
    return null;
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? `${command} was not found`
      : error instanceof Error
      ? error.message
      : String(error);
    return `${why}; set BROWSER to your browser's command, or open ${target} yourself`;
  }
}

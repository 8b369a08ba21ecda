/**
 * The availability check every Docker test file runs first (sandboxes.md rule 137,
 * toolchain.md §5.8): a raw `GET /_ping` to the endpoint of rule 104 with a 2 s limit.
 *
 * ```ts
 * const docker = await dockerAvailability();
 * Deno.test({ name: "…", ignore: !docker.ok, fn: async () => {} });
 * ```
 *
 * No answer prints one line to stderr and the file's tests register as ignored; with
 * `NICEEVAL_REQUIRE_DOCKER=1` (as in CI, `scripts/ci/dockerd.sh`) it throws, so the file fails.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The endpoint used when `DOCKER_HOST` is unset (rule 104). */
export const DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock";
/** How long the ping may take before the daemon counts as absent. */
export const PING_LIMIT_MS = 2_000;

/** The result of the ping. */
export interface DockerAvailability {
  /** True when the daemon answered `GET /_ping` with status 200 in time. */
  readonly ok: boolean;
  /** The endpoint that was pinged, as `DOCKER_HOST` spells it. */
  readonly endpoint: string;
  /** Why the daemon counts as absent; empty when `ok`. */
  readonly reason: string;
}

/** Seams for testing the helper itself; production calls pass nothing. */
export interface AvailabilityOptions {
  readonly env?: (name: string) => string | undefined;
  readonly limitMs?: number;
  readonly writeStderr?: (line: string) => void | Promise<void>;
}

let memo: Promise<DockerAvailability> | undefined;

/**
 * Pings the Docker endpoint once per test file. Without options the result is memoized, so the
 * skip line is printed at most once per file.
 */
export function dockerAvailability(options?: AvailabilityOptions): Promise<DockerAvailability> {
  if (options !== undefined) return checkAvailability(options);
  memo ??= checkAvailability({});
  return memo;
}

/** The line rule 137 prints when no daemon answers. */
export function skipLine(endpoint: string): string {
  return `docker tests skipped: no Docker daemon answered at ${endpoint} within 2 s ` +
    "(start one with scripts/ci/dockerd.sh)";
}

async function checkAvailability(options: AvailabilityOptions): Promise<DockerAvailability> {
  const env = options.env ?? ((name: string) => Deno.env.get(name));
  const endpoint = env("DOCKER_HOST") || DEFAULT_DOCKER_HOST;
  const reason = await ping(endpoint, env, options.limitMs ?? PING_LIMIT_MS);
  if (reason === "") return { ok: true, endpoint, reason };
  if (env("NICEEVAL_REQUIRE_DOCKER") === "1") {
    throw new Error(
      `NICEEVAL_REQUIRE_DOCKER=1 but no Docker daemon answered at ${endpoint} within 2 s ` +
        `(${reason}); start one with scripts/ci/dockerd.sh`,
    );
  }
  const write = options.writeStderr ?? writeStderr;
  await write(skipLine(endpoint));
  return { ok: false, endpoint, reason };
}

async function writeStderr(line: string): Promise<void> {
  await Deno.stderr.write(new TextEncoder().encode(`${line}\n`));
}

/** Returns "" when the daemon answered 200, else the reason it did not. */
async function ping(
  endpoint: string,
  env: (name: string) => string | undefined,
  limitMs: number,
): Promise<string> {
  let conn: Deno.Conn | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let over = false;
  const expired = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${limitMs} ms`), limitMs);
  });
  const attempt = (async () => {
    const opened = await connect(endpoint, env);
    conn = opened;
    if (over) {
      closeQuietly(opened);
      return "connected after the limit";
    }
    return await exchange(opened);
  })().catch((error: unknown) => error instanceof Error ? error.message : String(error));
  try {
    return await Promise.race([attempt, expired]);
  } finally {
    over = true;
    clearTimeout(timer);
    if (conn !== undefined) {
      // Closing ends a pending read; wait for it so no op outlives the check.
      closeQuietly(conn);
      await attempt;
    }
    // A connect still pending here closes its connection itself when it completes.
  }
}

function closeQuietly(conn: Deno.Conn | undefined): void {
  try {
    conn?.close();
  } catch {
    // already closed
  }
}

async function connect(
  endpoint: string,
  env: (name: string) => string | undefined,
): Promise<Deno.Conn> {
  if (endpoint.startsWith("unix://")) {
    return await Deno.connect({ transport: "unix", path: endpoint.slice("unix://".length) });
  }
  const url = new URL(endpoint.replace(/^tcp:/, "http:"));
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const tls = (env("DOCKER_TLS_VERIFY") ?? "") !== "" || url.port === "2376";
  const port = Number(url.port || (tls ? 2376 : 2375));
  if (!tls) return await Deno.connect({ hostname, port });
  const certs = env("DOCKER_CERT_PATH") ?? join(env("HOME") ?? "", ".docker");
  const read = (name: string) => Deno.readTextFile(join(certs, name)).catch(() => undefined);
  const [ca, cert, key] = await Promise.all([read("ca.pem"), read("cert.pem"), read("key.pem")]);
  return await Deno.connectTls({
    hostname,
    port,
    ...(ca === undefined ? {} : { caCerts: [ca] }),
    ...(cert === undefined || key === undefined ? {} : { cert, key }),
  });
}

/** Sends `GET /_ping` and reads until the status line is complete. */
async function exchange(conn: Deno.Conn): Promise<string> {
  const request = "GET /_ping HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n";
  await conn.write(new TextEncoder().encode(request));
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(1024);
  let text = "";
  while (!text.includes("\r\n")) {
    const n = await conn.read(buffer);
    if (n === null) break;
    text += decoder.decode(buffer.subarray(0, n), { stream: true });
  }
  const status = text.split("\r\n", 1)[0] ?? "";
  if (/^HTTP\/1\.[01] 200\b/.test(status)) return "";
  return status === "" ? "the endpoint closed without answering" : `answered "${status}"`;
}

/**
 * Runs `fn` while holding the test suite's lock on the daemon's address pools. Test files run in
 * parallel against one daemon; a test that creates networks, or counts the pools' use, holds this
 * lock so that no other file's networks come or go under it. The lock is an flock on a file in
 * the temp directory, keyed by the endpoint, so it also spans processes and is released if one
 * dies.
 */
export async function withDaemonNetworks<T>(fn: () => Promise<T>): Promise<T> {
  const endpoint = Deno.env.get("DOCKER_HOST") || DEFAULT_DOCKER_HOST;
  const key = endpoint.replace(/[^A-Za-z0-9]+/g, "_").slice(-80);
  const path = join(tmpdir(), `niceeval-test-docker-networks-${key}.lock`);
  const file = await Deno.open(path, { create: true, write: true });
  try {
    await file.lock(true);
    return await fn();
  } finally {
    file.close();
  }
}

/**
 * The SDK adapter behind the e2b port (sandboxes.md rules 121–127, 141): each port call maps to
 * one `e2b` SDK call on a client bound to the host environment snapshot (`E2B_API_KEY`,
 * `E2B_API_URL`, `E2B_SANDBOX_URL`, `E2B_DOMAIN`), never to the process environment. The SDK's own
 * 429 retries are off for create: niceeval's create retry and pacing decide (rules 41, 59).
 */
import { E2B, type Sandbox } from "e2b";
import type {
  E2BCreateOptions,
  E2BInstance,
  E2BListedSandbox,
  E2BPort,
  E2BProcess,
  E2BRunOptions,
} from "./port.ts";

/** Request limit of the control plane (rule 122). */
const REQUEST_TIMEOUT_MS = 60_000;

/** The SDK client options taken from the host environment snapshot. */
export function e2bClientOptions(
  hostEnv: Readonly<Record<string, string>>,
): ConstructorParameters<typeof E2B>[0] {
  const pick = (name: string) => {
    const value = hostEnv[name];
    return value === undefined || value === "" ? undefined : value;
  };
  const apiKey = pick("E2B_API_KEY");
  const apiUrl = pick("E2B_API_URL");
  const sandboxUrl = pick("E2B_SANDBOX_URL");
  const domain = pick("E2B_DOMAIN");
  return {
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(apiUrl === undefined ? {} : { apiUrl }),
    ...(sandboxUrl === undefined ? {} : { sandboxUrl }),
    ...(domain === undefined ? {} : { domain }),
  };
}

/** The port over the real SDK. */
export function createE2BSdkPort(hostEnv: Readonly<Record<string, string>>): E2BPort {
  const client = new E2B(e2bClientOptions(hostEnv));
  return {
    create: async (template: string, o: E2BCreateOptions) => {
      const sbx = await client.Sandbox.create(template, {
        timeoutMs: o.timeoutMs,
        metadata: { ...o.metadata },
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        retries: 0,
        ...(o.signal ? { signal: o.signal } : {}),
      });
      return sdkInstance(sbx);
    },
    list: (metadata, signal) => listAll(client, metadata, signal),
    kill: (id, signal) => client.Sandbox.kill(id, signal ? { signal } : {}),
  };
}

async function* listAll(
  client: E2B,
  metadata: Readonly<Record<string, string>>,
  signal: AbortSignal | undefined,
): AsyncIterable<E2BListedSandbox> {
  const query = Object.keys(metadata).length === 0 ? {} : { query: { metadata: { ...metadata } } };
  const pages = client.Sandbox.list(query);
  while (pages.hasNext) {
    signal?.throwIfAborted();
    const items = await pages.nextItems(signal ? { signal } : undefined);
    for (const info of items) {
      yield {
        id: info.sandboxId,
        metadata: info.metadata ?? {},
        state: info.state,
        ...(info.startedAt instanceof Date ? { startedAt: info.startedAt } : {}),
      };
    }
  }
}

function sdkInstance(sbx: Sandbox): E2BInstance {
  return {
    id: sbx.sandboxId,
    run: (cmd, o) => runBackground(sbx, cmd, o),
    read: (path, o) =>
      sbx.files.read(path, {
        format: "bytes",
        ...(o.user ? { user: o.user } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
      }),
    write: async (path, data, o) => {
      const buffer = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
      await sbx.files.write(path, buffer as ArrayBuffer, {
        ...(o.user ? { user: o.user } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
      });
    },
    exists: (path, o) =>
      sbx.files.exists(path, {
        ...(o.user ? { user: o.user } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
      }),
    info: async (signal) => ({ endAt: (await sbx.getInfo(signal ? { signal } : {})).endAt }),
    setTimeout: (ms, signal) => sbx.setTimeout(ms, signal ? { signal } : {}),
    kill: (signal) => sbx.kill(signal ? { signal } : {}),
  };
}

/** Rule 123: one background command with no SDK time limit; stdin is sent, then closed. */
async function runBackground(sbx: Sandbox, cmd: string, o: E2BRunOptions): Promise<E2BProcess> {
  const hasStdin = o.stdin !== undefined;
  const handle = await sbx.commands.run(cmd, {
    background: true,
    timeoutMs: 0,
    stdin: hasStdin,
    ...(o.cwd ? { cwd: o.cwd } : {}),
    ...(o.user ? { user: o.user } : {}),
    ...(o.envs ? { envs: { ...o.envs } } : {}),
    ...(o.onStdout ? { onStdout: o.onStdout } : {}),
    ...(o.onStderr ? { onStderr: o.onStderr } : {}),
  });
  if (hasStdin) {
    try {
      if (o.stdin!.length > 0) await handle.sendStdin(o.stdin!);
      await handle.closeStdin();
    } catch {
      // A command that exits without reading its input refuses the rest; its exit status is
      // what the caller reports.
    }
  }
  const waited = handle.wait().then(
    (r) => ({ exitCode: r.exitCode }),
    (error: unknown) => {
      const exitCode = (error as { name?: unknown; exitCode?: unknown }).exitCode;
      if (
        (error as { name?: unknown }).name === "CommandExitError" && typeof exitCode === "number"
      ) {
        return { exitCode };
      }
      throw error;
    },
  );
  waited.catch(() => undefined); // observed by wait(); never an unhandled rejection
  return {
    disconnect: () => handle.disconnect(),
    kill: () => handle.kill(),
    wait: () => waited,
  };
}

/**
 * The {@link VercelPort} over the `@vercel/sandbox` SDK: one SDK call per port member, nothing
 * else (sandboxes.md rule 143). Credentials are passed explicitly when the environment has
 * `VERCEL_TOKEN`, `VERCEL_TEAM_ID` and `VERCEL_PROJECT_ID`; otherwise the SDK reads its own OIDC
 * environment. Covered by the live test, never by unit tests.
 */
import { Sandbox } from "@vercel/sandbox";
import type { VercelCredentials } from "./credentials.ts";
import type { VercelInstance, VercelPort, VercelSummary } from "./port.ts";

/** Creates the SDK port; `credentials` undefined leaves the SDK to its OIDC environment. */
export function createSdkPort(credentials: VercelCredentials | undefined): VercelPort {
  const creds = credentials === undefined ? {} : { ...credentials };
  return {
    create: async (p) => {
      const source = p.source.type === "snapshot"
        ? { source: { type: "snapshot" as const, snapshotId: p.source.snapshotId } }
        : { runtime: p.source.runtime };
      return wrap(
        await Sandbox.create({
          ...source,
          name: p.name,
          timeout: p.timeout,
          ...(p.vcpus === undefined ? {} : { resources: { vcpus: p.vcpus } }),
          persistent: false,
          tags: { ...p.tags },
          signal: p.signal,
          ...creds,
        }),
      );
    },
    get: async (name, o) =>
      wrap(
        await Sandbox.get({
          name,
          resume: false,
          ...(o.signal === undefined ? {} : { signal: o.signal }),
          ...creds,
        }),
      ),
    list: (query, o) => listSandboxes(query, o.signal, creds),
  };
}

async function* listSandboxes(
  query: { readonly tag?: readonly [string, string]; readonly namePrefix?: string },
  signal: AbortSignal,
  creds: Partial<VercelCredentials>,
): AsyncGenerator<VercelSummary> {
  const tags: Record<string, string> | undefined = query.tag === undefined
    ? undefined
    : { [query.tag[0]]: query.tag[1] };
  const pages = await Sandbox.list({
    ...(tags === undefined ? {} : { tags }),
    ...(query.namePrefix === undefined ? {} : { namePrefix: query.namePrefix }),
    signal,
    ...creds,
  });
  for await (const s of pages) {
    yield { name: s.name, status: s.status, createdAt: s.createdAt, tags: s.tags };
  }
}

function wrap(sandbox: Sandbox): VercelInstance {
  return {
    get name() {
      return sandbox.name;
    },
    get expiresAt() {
      return sandbox.expiresAt;
    },
    runCommand: async (p) => {
      const finished = await sandbox.runCommand({
        cmd: p.cmd,
        args: [...p.args],
        cwd: p.cwd,
        ...(p.env === undefined ? {} : { env: { ...p.env } }),
        sudo: p.sudo,
        ...(p.signal === undefined ? {} : { signal: p.signal }),
      });
      return {
        exitCode: finished.exitCode,
        stdout: (o) => finished.stdout(o),
        stderr: (o) => finished.stderr(o),
      };
    },
    writeFiles: (files, o) =>
      sandbox.writeFiles(files.map((f) => ({ ...f })), signalOption(o.signal)),
    readFileToBuffer: async (file, o) => {
      const data = await sandbox.readFileToBuffer({ path: file.path }, signalOption(o.signal));
      return data === null ? null : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    },
    extendTimeout: (ms, o) => sandbox.extendTimeout(ms, signalOption(o.signal)),
    delete: (o) => sandbox.delete(signalOption(o.signal)),
  };
}

function signalOption(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal === undefined ? {} : { signal };
}

/**
 * envd's file side: `GET /files` (raw bytes of `path`, as `username`) and `POST /files`
 * (multipart `file` parts, or a raw `application/octet-stream` body, written to `path` with
 * parent directories created, mode 0644), and the `filesystem.Filesystem` unary calls `Stat`,
 * `MakeDir`, `Remove`, `ListDir` and `Move`. Paths resolve through the sandbox's {@link PathMap};
 * writes outside the sandbox root are refused, since they would land on the host.
 */
import { basename, dirname, join } from "node:path";
import type { SandboxRecord } from "./state.ts";
import type { HostPath } from "./paths.ts";
import { ConnectFault, userOf } from "./connect.ts";

function fileError(status: number, message: string): Response {
  return Response.json({ code: status, message }, { status });
}

function writable(path: HostPath): void {
  if (!path.mapped) {
    throw new ConnectFault("permission_denied", `permission denied: ${path.sandbox}`);
  }
}

/** `GET /files`. */
export async function readFile(url: URL, record: SandboxRecord, req: Request): Promise<Response> {
  const user = url.searchParams.get("username") || userOf(req);
  const path = record.paths.resolve(url.searchParams.get("path") ?? "", user);
  const stat = await Deno.stat(path.host).catch(() => undefined);
  if (stat === undefined) return fileError(404, `path '${path.sandbox}' does not exist`);
  if (stat.isDirectory) return fileError(400, `path '${path.sandbox}' is a directory`);
  const data = await Deno.readFile(path.host);
  return new Response(data, { headers: { "content-type": "application/octet-stream" } });
}

async function writeOne(path: HostPath, data: Uint8Array): Promise<Record<string, string>> {
  writable(path);
  await Deno.mkdir(dirname(path.host), { recursive: true });
  await Deno.writeFile(path.host, data, { mode: 0o644 });
  await Deno.chmod(path.host, 0o644);
  return { name: basename(path.sandbox), type: "file", path: path.sandbox };
}

/** `POST /files`. */
export async function writeFiles(url: URL, record: SandboxRecord, req: Request): Promise<Response> {
  const user = url.searchParams.get("username") || userOf(req);
  const target = url.searchParams.get("path");
  const written: Record<string, string>[] = [];
  try {
    if ((req.headers.get("content-type") ?? "").startsWith("application/octet-stream")) {
      if (target === null) return fileError(400, "path is required for octet-stream uploads");
      const data = new Uint8Array(await req.arrayBuffer());
      written.push(await writeOne(record.paths.resolve(target, user), data));
    } else {
      const form = await req.formData();
      for (const part of form.getAll("file")) {
        if (typeof part === "string") return fileError(400, "file part without a body");
        const path = target ?? part.name;
        const data = new Uint8Array(await part.arrayBuffer());
        written.push(await writeOne(record.paths.resolve(path, user), data));
      }
    }
  } catch (e) {
    if (e instanceof ConnectFault) return fileError(403, e.message);
    throw e;
  }
  if (written.length === 0) return fileError(400, "no file in the request");
  return Response.json(written);
}

function permissions(mode: number, isDirectory: boolean, isSymlink: boolean): string {
  const kind = isSymlink ? "l" : isDirectory ? "d" : "-";
  let text = "";
  for (let shift = 6; shift >= 0; shift -= 3) {
    const bits = (mode >> shift) & 7;
    text += `${bits & 4 ? "r" : "-"}${bits & 2 ? "w" : "-"}${bits & 1 ? "x" : "-"}`;
  }
  return kind + text;
}

async function entryInfo(path: HostPath): Promise<Record<string, unknown>> {
  const stat = await Deno.lstat(path.host).catch(() => undefined);
  if (stat === undefined) throw new ConnectFault("not_found", `path '${path.sandbox}' not found`);
  const mode = (stat.mode ?? 0) & 0o777;
  const type = stat.isSymlink
    ? "FILE_TYPE_SYMLINK"
    : stat.isDirectory
    ? "FILE_TYPE_DIRECTORY"
    : "FILE_TYPE_FILE";
  return {
    name: basename(path.sandbox),
    type,
    path: path.sandbox,
    size: String(stat.size),
    mode,
    permissions: permissions(mode, stat.isDirectory, stat.isSymlink),
    owner: "user",
    group: "user",
    ...(stat.mtime ? { modifiedTime: stat.mtime.toISOString() } : {}),
    ...(stat.isSymlink ? { symlinkTarget: await Deno.readLink(path.host) } : {}),
  };
}

async function listDir(dir: HostPath, depth: number, user: string, record: SandboxRecord) {
  const entries: Record<string, unknown>[] = [];
  for await (const e of Deno.readDir(dir.host)) {
    const child = record.paths.resolve(join(dir.sandbox, e.name), user);
    entries.push(await entryInfo(child));
    if (depth > 1 && e.isDirectory) entries.push(...await listDir(child, depth - 1, user, record));
  }
  return entries;
}

/** Answers a unary `filesystem.Filesystem` call. */
export async function filesystemUnary(
  method: string,
  message: Record<string, unknown>,
  record: SandboxRecord,
  user: string,
): Promise<unknown> {
  const resolve = (field: string) => record.paths.resolve(String(message[field] ?? ""), user);
  switch (method) {
    case "Stat":
      return { entry: await entryInfo(resolve("path")) };
    case "MakeDir": {
      const path = resolve("path");
      writable(path);
      if (await Deno.lstat(path.host).then(() => true, () => false)) {
        throw new ConnectFault("already_exists", `path '${path.sandbox}' already exists`);
      }
      await Deno.mkdir(path.host, { recursive: true });
      return { entry: await entryInfo(path) };
    }
    case "Remove": {
      const path = resolve("path");
      writable(path);
      await Deno.remove(path.host, { recursive: true }).catch(() => undefined);
      return {};
    }
    case "ListDir": {
      const path = resolve("path");
      const info = await entryInfo(path);
      if (info.type !== "FILE_TYPE_DIRECTORY") {
        throw new ConnectFault("invalid_argument", `path '${path.sandbox}' is not a directory`);
      }
      return { entries: await listDir(path, Number(message.depth ?? 1), user, record) };
    }
    case "Move": {
      const source = resolve("source");
      const destination = resolve("destination");
      writable(source);
      writable(destination);
      await entryInfo(source);
      await Deno.mkdir(dirname(destination.host), { recursive: true });
      await Deno.rename(source.host, destination.host);
      return { entry: await entryInfo(destination) };
    }
    default:
      throw new ConnectFault("unimplemented", `filesystem.Filesystem/${method} is not faked`);
  }
}

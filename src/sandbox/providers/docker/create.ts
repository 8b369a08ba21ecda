/**
 * Creating one container (sandboxes.md rule 106): `sleep <ttl>` as PID 1 under an init, the owner
 * labels plus `niceeval.expires`, then, as root, the default user's ids, the workdir and the
 * control directory, and the shell probe. Any failure after `createContainer` removes the container
 * (and its own network) before rethrowing (rule 22).
 */
// @ts-types="@types/dockerode"
import type Docker from "dockerode";
import { type Clock, errorMessage } from "../../../_shared/mod.ts";
import type { SandboxDiagnostic } from "../../types.ts";
import { DOCKER_LABELS } from "./client.ts";
import { CONTROL_DIR, execCollect } from "./_exec.ts";
import { DockerHandle } from "./handle.ts";
import { stopContainer } from "./stop.ts";

/** The plan fields a container is made from. */
export interface ContainerPlan {
  readonly image: string;
  readonly user?: string;
  readonly workdir: string;
  readonly network: "none" | "bridge" | "own";
  readonly cpus?: number;
  readonly memoryMb?: number;
  readonly pidsLimit?: number;
}

/** What one create needs besides the plan. */
export interface ContainerCreateOptions {
  /** The owner labels of §7.1 (without `niceeval.expires`). */
  readonly labels: Readonly<Record<string, string>>;
  readonly ttlSeconds: number;
  /** The name of the sandbox's own network, used only with `network: "own"`. */
  readonly networkName: string;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly diagnostic: (d: SandboxDiagnostic) => void;
  /** The own-network gate's permit (rule 118); the handle releases it when its stop settles. */
  readonly networkPermit?: Disposable;
}

/** Prepares the workdir and control directory; prints the shell (rule 106). */
const SETUP_SCRIPT = 'mkdir -p "$1" "$3" && chown "$2" "$1" && chmod 1777 "$3" || exit 1; ' +
  "if [ -x /bin/bash ]; then echo bash; else echo sh; fi";
/** Prints the default user's uid, gid and home. */
const PROBE_SCRIPT = 'id -u && id -g && printf "%s\\n" "$HOME"';

/** Creates and starts a container for `plan`; resolves with its handle. */
export async function createContainerSandbox(
  docker: Docker,
  plan: ContainerPlan,
  o: ContainerCreateOptions,
): Promise<DockerHandle> {
  o.signal.throwIfAborted();
  const expiresAt = o.clock.now() + o.ttlSeconds * 1000;
  const labels = { ...o.labels, [DOCKER_LABELS.expires]: new Date(expiresAt).toISOString() };
  let network: string | undefined;
  let container: Docker.Container | undefined;
  try {
    if (plan.network === "own") {
      await docker.createNetwork({
        Name: o.networkName,
        Driver: "bridge",
        CheckDuplicate: true,
        Labels: labels,
        Options: { "com.docker.network.bridge.enable_icc": "false" },
      });
      network = o.networkName;
    }
    container = await docker.createContainer({
      Image: plan.image,
      Entrypoint: ["sleep"],
      Cmd: [String(o.ttlSeconds)],
      ...(plan.user === undefined ? {} : { User: plan.user }),
      WorkingDir: plan.workdir,
      Labels: labels,
      Tty: false,
      HostConfig: {
        Init: true,
        AutoRemove: false,
        NetworkMode: network ?? plan.network,
        ...(plan.cpus === undefined ? {} : { NanoCpus: Math.round(plan.cpus * 1e9) }),
        ...(plan.memoryMb === undefined ? {} : {
          Memory: plan.memoryMb * 1024 * 1024,
          MemorySwap: plan.memoryMb * 1024 * 1024,
        }),
        ...(plan.pidsLimit === undefined ? {} : { PidsLimit: plan.pidsLimit }),
      },
    });
    await container.start();
    o.signal.throwIfAborted();
    const ids = await probeUser(docker, container, plan.user, o.clock);
    o.signal.throwIfAborted();
    const shell = await setupContainer(docker, container, plan.workdir, ids, o.clock);
    return new DockerHandle({
      docker,
      container,
      workdir: plan.workdir,
      user: plan.user,
      uid: ids.uid,
      gid: ids.gid,
      shell,
      expiresAt,
      network,
      ...(o.networkPermit === undefined ? {} : { networkPermit: o.networkPermit }),
      clock: o.clock,
    });
  } catch (error) {
    await removePartial(docker, container?.id, network, o);
    throw error;
  }
}

async function probeUser(
  docker: Docker,
  container: Docker.Container,
  user: string | undefined,
  clock: Clock,
): Promise<{ uid: number; gid: number }> {
  const r = await execCollect({ docker, container, clock }, {
    argv: ["sh", "-c", PROBE_SCRIPT],
    user,
    cwd: "/",
  });
  const [uid, gid] = new TextDecoder().decode(r.stdout).split("\n").map((l) => Number(l.trim()));
  if (r.exitCode !== 0 || !Number.isSafeInteger(uid) || !Number.isSafeInteger(gid)) {
    throw new Error(
      `Cannot read the ids of the default user: exit ${r.exitCode}: ${
        new TextDecoder().decode(r.stderr).trim().slice(-500)
      }`,
    );
  }
  return { uid: uid!, gid: gid! };
}

async function setupContainer(
  docker: Docker,
  container: Docker.Container,
  workdir: string,
  ids: { uid: number; gid: number },
  clock: Clock,
): Promise<"bash" | "sh"> {
  const r = await execCollect({ docker, container, clock }, {
    argv: ["sh", "-c", SETUP_SCRIPT, "sh", workdir, `${ids.uid}:${ids.gid}`, CONTROL_DIR],
    user: "root",
    cwd: "/",
  });
  const out = new TextDecoder().decode(r.stdout).trim();
  if (r.exitCode !== 0 || (out !== "bash" && out !== "sh")) {
    throw new Error(
      `Cannot prepare workdir "${workdir}": exit ${r.exitCode}: ${
        new TextDecoder().decode(r.stderr).trim().slice(-500)
      }`,
    );
  }
  return out;
}

/** Kill-on-failure (rule 22); a failed removal is reported, the create error is what rejects. */
async function removePartial(
  docker: Docker,
  id: string | undefined,
  network: string | undefined,
  o: ContainerCreateOptions,
): Promise<void> {
  try {
    if (id !== undefined) await stopContainer(docker, id, { network });
    else if (network !== undefined) await docker.getNetwork(network).remove();
  } catch (error) {
    o.diagnostic({
      code: "sandbox-stop-failed",
      level: "error",
      message: `Cannot remove the partial docker sandbox: ${errorMessage(error)}`,
      data: { sandboxId: id ?? network },
    });
  }
}

/**
 * Stopping a container by id (sandboxes.md rule 111), shared by handles, kill-on-failure and
 * `destroyDetached`.
 */
// @ts-types="@types/dockerode"
import type Docker from "dockerode";
import { errorMessage } from "../../../_shared/mod.ts";
import { dockerStatus } from "./client.ts";

/**
 * The stop sequence of rule 111, also used by `destroyDetached`: stop with no grace period (304
 * and 404 ignored), remove with volumes (404 ignored), then remove the sandbox's own network (404
 * ignored). Every other failure is collected into one `AggregateError`.
 */
export async function stopContainer(
  docker: Docker,
  id: string,
  o: { readonly network?: string | undefined } = {},
): Promise<"destroyed" | "already-gone"> {
  const { network } = o;
  const errors: unknown[] = [];
  let gone = false;
  const container = docker.getContainer(id);
  await container.stop({ t: 0 }).catch((error: unknown) => {
    const status = dockerStatus(error);
    if (status === 404) gone = true;
    else if (status !== 304) errors.push(error);
  });
  await container.remove({ force: true, v: true }).catch((error: unknown) => {
    const status = dockerStatus(error);
    if (status === 404) gone = true;
    // 409: a removal already in progress (the TTL or another stop) finishes it.
    else if (status !== 409) errors.push(error);
  });
  if (network !== undefined) {
    await docker.getNetwork(network).remove().catch((error: unknown) => {
      if (dockerStatus(error) !== 404) errors.push(error);
    });
  }
  if (errors.length > 0) {
    throw new AggregateError(
      errors,
      `Cannot stop docker sandbox "${id.slice(0, 12)}": ${errors.map(errorMessage).join("; ")}`,
    );
  }
  return gone ? "already-gone" : "destroyed";
}

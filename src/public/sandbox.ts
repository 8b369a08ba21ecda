/**
 * @module
 * `niceeval/sandbox`: sandbox layers for sandbox agents. This release has no sandbox provider yet;
 * the entry exposes the layer type that eval and experiment options accept.
 *
 * @example
 * ```ts
 * import type { SandboxLayer } from "niceeval/sandbox";
 * const none: SandboxLayer | undefined = undefined;
 * ```
 */
export type { SandboxLayer } from "../discovery/mod.ts";

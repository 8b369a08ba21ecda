/**
 * The private state behind a {@link SandboxLayer}, stored under a `Symbol.for` key so that a layer
 * made by another copy of the API is still readable; and the layer object built around it.
 */
import { brand, isBranded } from "../_shared/mod.ts";
import { SandboxConfigError } from "./errors.ts";
import type {
  CreateContext,
  CreateErrorClass,
  PrepareStep,
  SandboxHandle,
  SandboxHook,
  SandboxLayer,
} from "./types.ts";

/** The key of a layer's state. */
const LAYER_STATE_KEY: unique symbol = Symbol.for("niceeval.sandbox-layer.state") as never;

/** A `defineSandbox` provider as the layer carries it. */
export interface CustomSandboxDefinition {
  readonly name: string;
  readonly create: (ctx: CreateContext) => Promise<SandboxHandle>;
  readonly recommendedConcurrency: number;
  readonly exclusive: boolean;
  readonly classifyCreateError?: (error: unknown) => CreateErrorClass;
}

/** One setup or teardown hook in declaration order. */
interface LayerHook {
  readonly kind: "setup" | "teardown";
  readonly fn: SandboxHook;
}

/** Everything a layer knows. */
export interface LayerState {
  /** `undefined` for `sandboxLayer()`. */
  readonly provider: string | undefined;
  /** Provider options besides `fixture` and `lifetimeMs` (frozen). */
  readonly spec: Readonly<Record<string, unknown>>;
  /** The fixture as declared and as resolved to an absolute host path. */
  readonly fixture?: { readonly declared: string; readonly path: string };
  readonly lifetimeMs?: number;
  /** URL of the file that called the factory, when known. */
  readonly declaringFile?: string;
  /** Directory for relative host paths of hooks (rule 26), when known. */
  readonly hostDir?: string;
  readonly hooks: readonly LayerHook[];
  readonly prepare: readonly PrepareStep[];
  readonly custom?: CustomSandboxDefinition;
}

/** Builds the immutable, branded layer object around `state`. */
export function makeLayer(state: LayerState): SandboxLayer {
  Object.freeze(state);
  const layer = {
    kind: state.provider === undefined ? "layer" : "template",
    provider: state.provider,
    setup(fn: SandboxHook): SandboxLayer {
      return makeLayer({ ...state, hooks: [...state.hooks, { kind: "setup", fn: hookOf(fn) }] });
    },
    teardown(fn: SandboxHook): SandboxLayer {
      const hook = { kind: "teardown" as const, fn: hookOf(fn, "teardown") };
      return makeLayer({ ...state, hooks: [...state.hooks, hook] });
    },
    prepare(...steps: PrepareStep[]): SandboxLayer {
      return makeLayer({ ...state, prepare: [...state.prepare, ...steps.map(stepOf)] });
    },
  };
  Object.defineProperty(layer, LAYER_STATE_KEY, { value: state, enumerable: false });
  return Object.freeze(brand(layer, "sandbox-layer")) as SandboxLayer;
}

/** The state of a layer; throws `TypeError` for anything that is not a sandbox layer. */
export function layerState(layer: unknown): LayerState {
  const state = isBranded(layer, "sandbox-layer")
    ? (layer as Record<symbol, unknown>)[LAYER_STATE_KEY]
    : undefined;
  if (typeof state !== "object" || state === null) {
    throw new TypeError("Cannot read sandbox layer: the value is not a niceeval/sandbox layer");
  }
  return state as LayerState;
}

function hookOf(fn: unknown, what = "setup"): SandboxHook {
  if (typeof fn !== "function") {
    throw new SandboxConfigError(what, `${what}() expects a function, got ${typeof fn}`);
  }
  return fn as SandboxHook;
}

function stepOf(step: unknown, index: number): PrepareStep {
  const path = `prepare[${index}]`;
  if (typeof step === "function") return step as PrepareStep;
  if (typeof step === "string") {
    if (step.trim() === "") throw new SandboxConfigError(path, `${path} is an empty script`);
    return step;
  }
  if (Array.isArray(step)) {
    if (step.length === 0 || !step.every((a) => typeof a === "string") || step[0] === "") {
      throw new SandboxConfigError(
        path,
        `${path} must be a non-empty argv of strings with a non-empty program`,
      );
    }
    return Object.freeze([...step]) as unknown as PrepareStep;
  }
  throw new SandboxConfigError(
    path,
    `${path} must be a script, an argv array or a function, got ${typeof step}`,
  );
}

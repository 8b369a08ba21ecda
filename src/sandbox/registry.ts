/**
 * The provider registry (STYLE.md §10.3): built-in providers are loaded on first use with literal
 * dynamic imports; an unknown name is answered with the registered names. Layers made by
 * `defineSandbox` bring their own provider.
 */
import { type Clock, closest } from "../_shared/mod.ts";
import { SandboxConfigError } from "./errors.ts";
import { type CustomSandboxDefinition, layerState } from "./_layer_state.ts";
import type { SandboxLayer, SandboxProvider } from "./types.ts";

/** What built-in providers are constructed from: environment credentials only (rule 23). */
interface ProviderContext {
  /** The host environment snapshot. */
  readonly hostEnv: Readonly<Record<string, string>>;
  readonly clock: Clock;
  /** The name of the user niceeval runs as, when the host knows it (rule 100). */
  readonly user?: string | undefined;
  /** Permits of the docker own-network gate when the address pools are low (rule 118). */
  readonly dockerNetworkPermits?: number | undefined;
}

/** Loads one provider. */
export type ProviderLoader = (ctx: ProviderContext) => Promise<SandboxProvider>;

/** The built-in providers of this release. */
const BUILTIN_PROVIDERS: Readonly<Record<string, ProviderLoader>> = Object.freeze({
  local: async (ctx: ProviderContext) => {
    const { createLocalProvider, localTmpDir } = await import("./providers/local.ts");
    return createLocalProvider({
      hostEnv: ctx.hostEnv,
      clock: ctx.clock,
      tmpDir: localTmpDir(ctx.hostEnv),
      user: ctx.user,
    }) as SandboxProvider;
  },
  docker: async (ctx: ProviderContext) => {
    const { createDockerProvider, createNetworkGate } = await import("./providers/docker.ts");
    const { createDockerBuilds } = await import("./providers/docker/build.ts");
    const permits = ctx.dockerNetworkPermits;
    return createDockerProvider({
      hostEnv: ctx.hostEnv,
      clock: ctx.clock,
      builds: createDockerBuilds({ hostEnv: ctx.hostEnv, clock: ctx.clock }),
      networkGate: permits === undefined ? undefined : createNetworkGate(permits),
    }) as SandboxProvider;
  },
  e2b: async (ctx: ProviderContext) => {
    const { createE2BProvider } = await import("./providers/e2b.ts");
    return createE2BProvider({ hostEnv: ctx.hostEnv, clock: ctx.clock }) as SandboxProvider;
  },
  vercel: async (ctx: ProviderContext) => {
    const { createVercelProvider } = await import("./providers/vercel.ts");
    return createVercelProvider({ hostEnv: ctx.hostEnv, clock: ctx.clock }) as SandboxProvider;
  },
});

/** Providers by name. */
export interface ProviderRegistry {
  /** Registered names, sorted. */
  names(): string[];
  /** The provider named `name`; throws `SandboxConfigError` naming the registered ones. */
  get(name: string): Promise<SandboxProvider>;
  /** The provider and provider spec of a template layer. */
  forLayer(layer: SandboxLayer): Promise<{ provider: SandboxProvider; spec: unknown }>;
}

/** Creates a registry over `loaders` (default: the built-in providers). */
export function createProviderRegistry(
  ctx: ProviderContext,
  loaders: Readonly<Record<string, ProviderLoader>> = BUILTIN_PROVIDERS,
): ProviderRegistry {
  const loaded = new Map<string, Promise<SandboxProvider>>();
  const custom = new WeakMap<CustomSandboxDefinition, SandboxProvider>();
  const names = () => Object.keys(loaders).sort();
  const get = (name: string) => {
    const loader = Object.hasOwn(loaders, name) ? loaders[name] : undefined;
    if (loader === undefined) {
      const near = closest(name, names());
      return Promise.reject(
        new SandboxConfigError(
          "provider",
          `Unknown sandbox provider "${name}"${near ? ` (did you mean "${near}"?)` : ""}: ` +
            `registered providers are ${names().map((n) => `"${n}"`).join(", ")}`,
        ),
      );
    }
    if (!loaded.has(name)) loaded.set(name, loader(ctx));
    return loaded.get(name)!;
  };
  return {
    names,
    get,
    forLayer: async (layer) => {
      const state = layerState(layer);
      if (state.custom !== undefined) {
        if (!custom.has(state.custom)) {
          const { createCustomProvider } = await import("./providers/custom.ts");
          custom.set(state.custom, createCustomProvider(state.custom) as SandboxProvider);
        }
        return { provider: custom.get(state.custom)!, spec: state.custom };
      }
      if (state.provider === undefined) {
        throw new SandboxConfigError(
          "provider",
          "Cannot pick a provider: the layer has no template",
        );
      }
      return { provider: await get(state.provider), spec: state.spec };
    },
  };
}
